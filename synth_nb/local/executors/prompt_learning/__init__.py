"""Prompt learning on the local backend: the GEPA and MIPRO executors and what they share.

``gepa`` / ``mipro`` read the create body and drive their search (``search_gepa`` on the ``gepa`` package,
``search_mipro`` on optuna's TPE). Around either search, ``runtime`` sets up the proposer
(``proposers``), the policy behind one interceptor route per candidate (``router``), the task-app
client with its hard rollout budget (``rollouts``) and the reporter of progress and results
(``report``); ``settings`` turns the ``[prompt_learning]`` table into typed settings.
"""
