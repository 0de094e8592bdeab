"""Job monitor: submit plans, follow jobs (events, metrics, status), re-attach, record streams."""

from __future__ import annotations

from typing import TYPE_CHECKING

from synth_nb._lazy import exports

if TYPE_CHECKING:
    from synth_nb.job._job import Job
    from synth_nb.job._submit import attach, submit
    from synth_nb.job.history import JobHistory, JobUpdate
    from synth_nb.job.recording import Recorder, read_recording
    from synth_nb.job.registry import JobRecord, JobRegistry
    from synth_nb.job.view import JobView

#: public name -> its module, imported on first use (``synth_nb._lazy``: a command that needs one module
#: of the package does not import all of them)
_EXPORTS = {
    "Job": "synth_nb.job._job",
    "attach": "synth_nb.job._submit",
    "submit": "synth_nb.job._submit",
    "JobHistory": "synth_nb.job.history",
    "JobUpdate": "synth_nb.job.history",
    "Recorder": "synth_nb.job.recording",
    "read_recording": "synth_nb.job.recording",
    "JobRecord": "synth_nb.job.registry",
    "JobRegistry": "synth_nb.job.registry",
    "JobView": "synth_nb.job.view",
}
__getattr__ = exports(__name__, _EXPORTS)

__all__ = ["Job", "JobHistory", "JobRecord", "JobRegistry", "JobUpdate", "JobView", "Recorder", "attach",
           "read_recording", "submit"]
