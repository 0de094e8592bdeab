"""How prompt learning jobs are found on a backend: their paths, id prefix and kind words (``FlowJobs``).

The flow's own data, kept apart from its ``Flow`` (``flow.py``) so that ``synth-nb cancel JOB_ID`` finds the job
without importing the flow (``benchmarks/cli_start.py``); the ``Flow`` reads it from here.
"""

from __future__ import annotations

from synth_nb.contract import FlowEndpoints, FlowJobs

__all__ = ["JOBS"]

JOBS = FlowJobs(
    "prompt_learning",
    FlowEndpoints.of_jobs("/prompt-learning/online/jobs",
                                               also_under=("/learning/jobs", "/orchestration/jobs")),
    id_prefix="pl_",
    kind_words=frozenset({"prompt_learning", "prompt-learning", "gepa", "mipro"}),
)
