"""The one definition of the ``train`` flags, shared by ``synth-nb train`` and ``%synth_train``.

``TRAIN_ARGUMENTS`` is data (argparse ``add_argument`` calls) so the IPython magic can apply the same
list through ``magic_arguments.argument`` and ``%synth_train?`` shows the same help.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

__all__ = ["OVERRIDE_FLAGS", "TRAIN_ARGUMENTS", "ArgSpec", "add_train_arguments", "build_train_parser"]

#: the flags that override a config value (``--backend`` is resolved on its own), as argparse dests
OVERRIDE_FLAGS = ("model", "dataset", "examples", "task_url", "idempotency", "allow_experimental")


@dataclass(frozen=True)
class ArgSpec:
    flags: tuple[str, ...]
    kwargs: dict[str, Any]


def _a(*flags: str, **kwargs: Any) -> ArgSpec:
    return ArgSpec(flags, kwargs)


TRAIN_ARGUMENTS: tuple[ArgSpec, ...] = (
    _a("--config", "-c", dest="configs", action="append", default=None, metavar="PATH",
       help="Training TOML (repeatable: one job per config). Omitted: discover configs in the folder."),
    _a("--env-file", "--env", dest="env_files", action="append", default=None, metavar="PATH",
       help="A .env file to read secrets from (repeatable; beats the process environment)."),
    _a("--modal-secret", dest="modal_secrets", action="append", default=None, metavar="NAME",
       help="Also read secrets from this Modal secret (needs the modal client)."),
    _a("--backend", default=None, metavar="URL",
       help="Backend base URL (the /api suffix is added), or 'local' for the embedded local backend."),
    _a("--model", default=None, help="Override the model (RL: the model to train; SFT: base model)."),
    _a("--dataset", default=None, metavar="PATH", help="SFT training JSONL (replaces [job].data)."),
    _a("--examples", type=int, default=None, metavar="N", help="SFT: upload only the first N examples."),
    _a("--task-url", default=None, metavar="URL", help="Task app URL (RL and prompt learning)."),
    _a("--idempotency", default=None, metavar="KEY",
       help="Idempotency-Key for job creation (default: a fresh key per submission)."),
    _a("--allow-experimental", dest="allow_experimental", action=argparse.BooleanOptionalAction,
       default=None, help="Allow experimental base models."),
    _a("--poll", dest="poll", action=argparse.BooleanOptionalAction, default=True,
       help="Stream the job until it ends (default) or return after submission."),
    _a("--poll-interval", type=float, default=5.0, metavar="SECONDS",
       help="Slowest polling interval when the backend has no event stream."),
    _a("--poll-timeout", type=float, default=3600.0, metavar="SECONDS",
       help="Give up watching (and exit 1) after this long."),
    _a("--stream-format", choices=("cli", "chart"), default="cli", help="Line output or live chart."),
    _a("--dry-run", action="store_true", help="Validate and print exactly what would be sent; send nothing."),
    _a("--json", dest="json_output", action="store_true", help="With --dry-run: print the plan as JSON."),
    _a("--yes", "-y", action="store_true", help="Submit without the confirmation step (notebook)."),
    _a("--wait", action="store_true", help="Block until the job ends (notebook)."),
    _a("--attach", default=None, metavar="JOB_ID", help="Re-attach to an existing job instead of submitting."),
    _a("--jobs", dest="list_jobs", action="store_true", help="List jobs submitted from this folder."),
    _a("--record", default=None, metavar="PATH", help="Save the job's stream to a JSONL recording."),
)


def add_train_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for spec in TRAIN_ARGUMENTS:
        parser.add_argument(*spec.flags, **spec.kwargs)
    return parser


def build_train_parser(prog: str = "synth-nb train") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Launch an RL, SFT or prompt-learning job from TOML config(s)."
    )
    return add_train_arguments(parser)
