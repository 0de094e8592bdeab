"""Job monitor: submit plans, follow jobs (events, metrics, status), re-attach, record streams."""

from __future__ import annotations

from synth_nb.job._job import Job
from synth_nb.job._submit import attach, submit
from synth_nb.job.history import JobHistory, JobUpdate
from synth_nb.job.recording import Recorder, read_recording
from synth_nb.job.registry import JobRecord, JobRegistry
from synth_nb.job.view import JobView

__all__ = ["Job", "JobHistory", "JobRecord", "JobRegistry", "JobUpdate", "JobView", "Recorder", "attach",
           "read_recording", "submit"]
