"""How sft jobs are found on a backend: their paths, id prefix and kind words (``FlowJobs``).

The flow's own data, kept apart from its ``Flow`` (``flow.py``) so that ``synth-nb cancel JOB_ID`` finds the job
without importing the flow (``benchmarks/cli_start.py``); the ``Flow`` reads it from here.
"""

from __future__ import annotations

from synth_nb.contract import FlowEndpoints, FlowJobs

__all__ = ["JOBS"]

JOBS = FlowJobs(
    "sft",
    FlowEndpoints.of_jobs("/learning/jobs", start=True, timeline=True),
    id_prefix=None,
    kind_words=frozenset({"sft", "sft_offline", "fine_tune", "fine-tune", "finetune", "fft", "qlora", "lora"}),
)
