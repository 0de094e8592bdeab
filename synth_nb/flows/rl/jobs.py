"""How RL jobs are found on a backend: their paths, id prefix and kind words (``FlowJobs``).

The flow's own data, kept apart from its ``Flow`` (``flow.py``) so that ``synth-nb cancel JOB_ID`` finds the job
without importing the flow (``benchmarks/cli_start.py``); the ``Flow`` reads it from here.
"""

from __future__ import annotations

from synth_nb.contract import FlowEndpoints, FlowJobs

__all__ = ["JOBS"]

JOBS = FlowJobs(
    "rl",
    FlowEndpoints.of_jobs("/rl/jobs", also_under=("/learning/jobs", "/orchestration/jobs"),
                                               metrics_also_under=("/learning/jobs",), timeline=True,
                                               timeline_also_under=("/learning/jobs",)),
    id_prefix=None,
    kind_words=frozenset({"rl", "rl_online", "reinforcement", "reinforcement_learning"}),
)
