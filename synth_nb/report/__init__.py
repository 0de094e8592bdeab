"""Jobs reported to the experiment trackers users already have: ``--report-to tensorboard,mlflow,wandb,trackio``.

``job.report_to("tensorboard")`` (or the flag on ``synth-nb train`` / ``attach`` / ``%synth_train``) writes
what the job holds, follows it as it streams, and closes the run when the job ends. One ``Reporter``
subclass per tracker (``_tensorboard``, ``_mlflow``, ``_wandb``, ``_trackio``) over ``_base``; the trackers' libraries are the
``report`` extra, imported only when a reporter opens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from synth_nb.errors import ConfigError
from synth_nb.report._base import ReportedJob, Reporter
from synth_nb.report.flags import (
    DEFAULT_DIR,
    REPORT_ARGUMENTS,
    REPORTERS,
    ReportOptions,
    add_report_arguments,
    report_targets,
    reporter_class,
)

__all__ = ["DEFAULT_DIR", "REPORTERS", "REPORT_ARGUMENTS", "ReportOptions", "Reporter", "add_report_arguments",
           "report_targets", "report_to", "start"]


def report_to(job: ReportedJob, targets: str | Iterable[str], *, report_dir: str | Path = DEFAULT_DIR,
              experiment: str | None = None) -> list[Reporter]:
    """Report ``job`` to each tracker of ``targets`` (``"tensorboard"``, ``"mlflow"``, ``"wandb"``, ``"trackio"``,
    or a comma list).

    Every tracker is checked before any writes, so a missing one fails with nothing half-done.
    """
    names = [t for part in ([targets] if isinstance(targets, str) else targets) for t in part.split(",") if t.strip()]
    classes = [reporter_class(name) for name in dict.fromkeys(n.strip().lower() for n in names)]
    if not classes:
        raise ConfigError(f"report_to needs a tracker: {' or '.join(REPORTERS)}", key="report-to")
    return [cls(job, Path(report_dir), experiment).follow() for cls in classes]


def start(jobs: Sequence[ReportedJob], options: ReportOptions) -> list[Reporter]:
    """What a command's report flags ask for, for every job it follows (nothing without ``--report-to``)."""
    if not options.targets:
        return []
    return [reporter for job in jobs
            for reporter in report_to(job, options.targets, report_dir=options.folder, experiment=options.experiment)]
