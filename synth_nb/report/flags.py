"""The ``--report-to`` / ``--report-dir`` / ``--mlflow-experiment`` flags, defined once for ``synth-nb train``,
``synth-nb attach`` and ``%synth_train``, and the options they make.

``REPORT_ARGUMENTS`` is data (``(flags, add_argument keywords)`` pairs), like the train flag table it is
appended to. A tracker whose library is missing fails while the flags are parsed (exit 2 / UsageError),
before anything is sent.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.errors import ConfigError
from synth_nb.report._base import EXTRA_HINT, Reporter, missing_modules
from synth_nb.report._mlflow import MLflowReporter
from synth_nb.report._tensorboard import TensorBoardReporter
from synth_nb.report._trackio import TrackioReporter
from synth_nb.report._wandb import WandbReporter
from synth_nb.secrets.redact import shown

__all__ = ["DEFAULT_DIR", "REPORTERS", "REPORT_ARGUMENTS", "ReportOptions", "add_report_arguments", "report_targets",
           "reporter_class"]

#: ``--report-to`` name -> its writer
REPORTERS: dict[str, type[Reporter]] = {cls.name: cls for cls in (TensorBoardReporter, MLflowReporter, WandbReporter,
                                                                  TrackioReporter)}
#: ``--report-dir``'s default, as HF Trainer's ``logging_dir``
DEFAULT_DIR = Path("runs")


def reporter_class(name: str) -> type[Reporter]:
    """The writer of ``name``; ``ConfigError`` naming the trackers there are (or the extra to install)."""
    cls = REPORTERS.get(name.strip().lower())
    if cls is None:
        raise ConfigError(f"unknown tracker {shown(name)}; expected {' or '.join(REPORTERS)}", key="report-to")
    cls.require()
    return cls


def report_targets(text: str) -> tuple[str, ...]:
    """``--report-to tensorboard,mlflow``: the trackers, each known and installed (else exit 2)."""
    names = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"needs one or more of {', '.join(REPORTERS)}")
    for name in names:
        cls = REPORTERS.get(name)
        if cls is None:
            raise argparse.ArgumentTypeError(f"unknown tracker {shown(name)}; expected {', '.join(REPORTERS)}")
        missing = missing_modules(cls.modules)
        if missing:
            raise argparse.ArgumentTypeError(f"{name} needs {', '.join(missing)}, which is not installed: "
                                             f"{EXTRA_HINT}")
    return names


def _name(text: str) -> str:
    if not text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"needs a name, got {shown(text)}")
    return text


def _folder(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a folder (got an empty one)")
    return text


REPORT_ARGUMENTS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--report-to",), dict(dest="report_to", type=report_targets, default=None, metavar="TRACKERS",
                            help="Also write the job's metrics to experiment trackers: tensorboard, mlflow, wandb "
                                 "(offline, for `wandb sync`), trackio (its local store); comma-separated, "
                                 "needs synth-nb[report].")),
    (("--report-dir",), dict(dest="report_dir", type=_folder, default=None, metavar="DIR",
                             help="With --report-to: TensorBoard's event files (one folder per job), the default "
                                  "MLflow store, W&B's offline runs and the default Trackio store go here "
                                  "(default: runs).")),
    (("--mlflow-experiment",), dict(dest="mlflow_experiment", type=_name, default=None, metavar="NAME",
                                    help="With --report-to mlflow: the experiment (default: the config file's "
                                         "name).")),
)


def add_report_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for flags, kwargs in REPORT_ARGUMENTS:
        parser.add_argument(*flags, **kwargs)
    return parser


@dataclass(frozen=True)
class ReportOptions:
    """What the report flags asked for: no targets, no reporting."""

    targets: tuple[str, ...] = ()
    folder: Path = DEFAULT_DIR
    experiment: str | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any], base: Path | None = None) -> ReportOptions:
        """From parsed flags (``vars(args)``); a relative ``--report-dir`` is under ``base`` (else the cwd).

        ``--report-dir`` without ``--report-to``, or ``--mlflow-experiment`` without mlflow, is a
        ``ConfigError``: a flag that would be silently ignored is a mistake to say before anything is sent.
        """
        targets = tuple(values.get("report_to") or ())
        for flag, dest, needs in (("--report-dir", "report_dir", None), ("--mlflow-experiment", "mlflow_experiment",
                                                                            MLflowReporter.name)):
            if values.get(dest) and (not targets or (needs is not None and needs not in targets)):
                raise ConfigError(f"{flag} is only used with --report-to {needs or 'TRACKERS'}", key=flag.lstrip("-"))
        folder = Path(values.get("report_dir") or DEFAULT_DIR)
        if base is not None and not folder.is_absolute():
            folder = base / folder
        return cls(targets, folder, values.get("mlflow_experiment") or None)
