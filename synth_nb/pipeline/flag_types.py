"""The flag primitives ``synth-nb cancel`` and every other command share: how a flag is written (``ArgSpec``), the
checked value types (seconds, job ids, paths), where jobs go and where secrets come from, and ``JOB_ID`` with its
target (``add_job_arguments``: ``attach`` and ``cancel``).

Apart from ``synth_nb.pipeline.flags`` (the ``train`` flags, which name every flow's overrides and the
trackers) so a command that only needs these parses its flags without importing a flow, the trackers or the
config loader (``benchmarks/cli_start.py``: ``synth-nb cancel``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synth_nb.untrusted import job_id_problem, shown_id

__all__ = ["SECRET_FLAGS", "TARGET_FLAGS", "ArgSpec", "a", "add_flags", "add_job_arguments", "job_id", "minutes",
           "path_text", "seconds"]

_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def shown(text: str) -> str:
    """A refused value as a message shows it (secrets masked: ``synth_nb.secrets.redact.shown``); imported when a
    value is refused: parsing good flags needs none of the masking rule's patterns."""
    from synth_nb.secrets.redact import shown as masked

    return masked(text)


@dataclass(frozen=True)
class ArgSpec:
    flags: tuple[str, ...]
    kwargs: dict[str, Any]


def a(*flags: str, default_is: str | None = None, **kwargs: Any) -> ArgSpec:
    """One flag; its help ends with its default, as synth-ai 0.2.24's ``--help`` shows it (``[default: 3600]``):
    ``default_is`` says it in words where the value alone would not (``None`` meaning "the config's value")."""
    shown_default = default_is if default_is is not None else _default_text(kwargs)
    if shown_default and kwargs.get("help") and "(default" not in kwargs["help"]:
        kwargs = {**kwargs, "help": f"{kwargs['help']} [default: {shown_default}]"}
    return ArgSpec(flags, kwargs)


def _default_text(kwargs: dict[str, Any]) -> str:
    """The flag's default as typed on a command line: ``3600``, ``--poll``; empty when there is none to say."""
    default = kwargs.get("default")
    if kwargs.get("action") is argparse.BooleanOptionalAction and isinstance(default, bool):
        return ("--" if default else "--no-") + str(kwargs.get("dest", "")).replace("_", "-")
    if default is None or isinstance(default, bool):
        return ""
    return f"{default:g}" if isinstance(default, float) else str(default)


def seconds(text: str) -> float:
    """A duration flag: a finite number of seconds above 0.

    ``-1`` would poll without pausing and ``nan`` would end the wait at once; argparse reports the
    ``ArgumentTypeError`` as ``argument --poll-interval: ...`` with exit code 2 (the magic: a UsageError).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {shown(text)}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {shown(text)}")
    return value


def job_id(text: str) -> str:
    """A job id flag (``--attach``, ``--rerun``, ``--fork``, ``attach JOB_ID``): ids become file names, so
    ``../x``, a control character or 5,000 characters are refused here (exit 2), before anything is asked."""
    problem = job_id_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{shown_id(text)} is not a job id: {problem}")
    return text


def minutes(text: str) -> float:
    """``--max-minutes``: a finite number written in ASCII decimals (``nan`` would never stop a job; whether it
    is above 0 is said with the other limits)."""
    if _DECIMAL.fullmatch(text.strip()) is None or not math.isfinite(float(text)):
        raise argparse.ArgumentTypeError(f"must be a finite number of minutes above 0, got {shown(text)}")
    return float(text)


def path_text(text: str) -> str:
    """A path flag: anything but blank (``Path("")`` would silently mean the current folder) and with no
    control character (a path is printed back)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a path (got an empty one)")
    if not text.isprintable():
        raise argparse.ArgumentTypeError(f"{shown(text)} holds a control or invisible character")
    return text


#: where jobs go (``--backend``): every command that talks to a backend
TARGET_FLAGS: tuple[ArgSpec, ...] = (
    a("--backend", default=None, metavar="URL",
       default_is="$SYNTH_BACKEND_OVERRIDE, else the hosted backend",
       help="Backend base URL (the /api suffix is added), or 'local' for the embedded local backend."),
)

#: where secrets come from
SECRET_FLAGS: tuple[ArgSpec, ...] = (
    a("--env-file", "--env", dest="env_files", action="append", default=None, metavar="PATH", type=path_text,
       default_is="the nearest .env above the config, a picker on a terminal when there are several",
       help="A .env file to read secrets from (repeatable; beats the process environment)."),
    a("--modal-secret", dest="modal_secrets", action="append", default=None, metavar="NAME",
       default_is="none", help="Also read secrets from this Modal secret (needs the modal client)."),
)

def add_flags(parser: argparse.ArgumentParser, *groups: Sequence[ArgSpec]) -> argparse.ArgumentParser:
    """Add each group's flags (``TARGET_FLAGS``, ``SECRET_FLAGS``, ``FOLLOW_FLAGS``, ``REPORT_FLAGS``) to
    ``parser``: ``attach`` and ``cancel`` take the same flags, with the same help, as ``train``."""
    for group in groups:
        for spec in group:
            parser.add_argument(*spec.flags, **spec.kwargs)
    return parser


def add_job_arguments(parser: argparse.ArgumentParser) -> None:
    """``JOB_ID`` and where it lives (``train``'s own target and secret flags): what ``attach`` and ``cancel``
    share."""
    from synth_nb.flows.registry import flow_names  # the names only: no flow is imported

    parser.add_argument("job_id", metavar="JOB_ID", type=job_id, help="The job (see `synth-nb jobs`).")
    add_flags(parser, TARGET_FLAGS, SECRET_FLAGS)
    parser.add_argument("--flow", choices=flow_names(), default=None,
                        help="The job's flow, when it is not in the registry (otherwise probed).")
