"""The one definition of the ``train`` flags, shared by ``synth-nb train``, ``%synth_train`` and the wizard.

``TRAIN_ARGUMENTS`` is data (argparse ``add_argument`` calls) so the IPython magic can apply the same
list through ``magic_arguments.argument`` and ``%synth_train?`` shows the same help. It lives beside the
actions that read the flags, so neither door imports the other. Its groups (where jobs go, where secrets come
from, how a job is followed, where it is reported) are what ``synth-nb attach`` and ``cancel`` add too, so a
flag means the same, with the same help, on every command; a new follow-side flag is one line in
``FOLLOW_FLAGS`` and one field of ``Request.following``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from synth_nb.errors import ConfigError
from synth_nb.flows import override_rows
from synth_nb.flows.override_rows import CORE_ROWS, count_argument
from synth_nb.pipeline.flag_types import (
    SECRET_FLAGS,
    TARGET_FLAGS,
    ArgSpec,
    add_flags,
    job_id,
    minutes,
    path_text,
    seconds,
)
from synth_nb.pipeline.flag_types import a as _a
from synth_nb.report import REPORT_ARGUMENTS

__all__ = ["ALL_EVENTS", "FOLLOW_FLAGS", "LIMIT_FLAGS", "OVERRIDE_FLAGS", "REPORT_FLAGS", "SECRET_FLAGS",
           "SYNTH_AI_FLAGS", "TARGET_FLAGS", "TRAIN_ARGUMENTS", "ArgSpec", "add_flags", "add_train_arguments",
           "build_train_parser", "job_id", "override_dests", "path_text", "seconds", "synth_ai_flags", "train_arguments"]

#: the flags every flow is asked about that override a config value (``--backend`` is resolved on its own),
#: as argparse dests; flows add their own (``override_dests``)
OVERRIDE_FLAGS = tuple(row.name for row in CORE_ROWS)


def _row(row: Any) -> ArgSpec:
    """An override row's flag: unset, the config's own value is sent."""
    return _a(row.flag, default_is="the config's value", **row.argparse_kwargs())


#: ``--all-events``: how an attached job's history is shown
ALL_EVENTS = _a("--all-events", dest="all_events", action="store_true",
                default_is="how many there were and the newest 20",
                help="When attaching: print every event of the job's history (new events are always printed as "
                     "they come).")

#: how a job is followed until it ends (``Request.following``): polling, the recording, the budget watchdog
FOLLOW_FLAGS: tuple[ArgSpec, ...] = (
    _a("--poll-interval", type=seconds, default=5.0, metavar="SECONDS",
       help="Slowest polling interval when the backend has no event stream."),
    _a("--poll-timeout", type=seconds, default=3600.0, metavar="SECONDS",
       help="Stop watching (exit 1; the job keeps running on the backend) after this long."),
    _a("--record", default=None, metavar="PATH", type=path_text, default_is="none",
       help="Save the job's stream to a JSONL recording."),
    _a("--stream-format", choices=("cli", "chart", "quiet"), default=None,
       default_is="cli on a terminal, quiet off it; chart off a terminal is quiet",
       help="cli: a line per update; chart: live chart; quiet: the lines that matter and a progress line at most "
            "each 10%% of the work or 30 s."),
    _a("--max-minutes", dest="max_minutes", type=minutes, default=None, metavar="M", default_is="no limit",
       help="Cancel the job after M minutes, keeping the best result the backend reports."),
    _a("--max-rollouts", dest="max_rollouts", type=count_argument, default=None, metavar="N",
       default_is="the config's budget",
       help="Stop at N rollouts: sent with a prompt-learning job (the backend stops there), "
            "and the job is cancelled if it goes past N."),
    _a("--max-tokens", dest="max_tokens", type=count_argument, default=None, metavar="N", default_is="no limit",
       help="Cancel the job once it has used N tokens (as the backend reports them)."),
    _a("--stop-on-plateau", dest="stop_on_plateau", type=count_argument, default=None, metavar="N",
       default_is="no limit",
       help="Cancel the job after N evaluations without a new best score."),
)

#: ``--report-to`` & co.
REPORT_FLAGS: tuple[ArgSpec, ...] = tuple(ArgSpec(flags, kwargs) for flags, kwargs in REPORT_ARGUMENTS)

#: synth-ai 0.2.24's own flags with no flag of that name here (it accepted and ignored them): each means its
#: nearest equivalent, or is refused naming what to type instead (``synth_ai_flags``), so a script written for
#: ``synth-ai train`` runs or is told exactly what to change
SYNTH_AI_FLAGS: tuple[ArgSpec, ...] = (
    _a("--local-backend", dest="local_backend", action="store_true",
       help="synth-ai 0.2.24's flag, which did nothing there: refused, naming --backend local."),
    _a("--tui", dest="tui", action="store_true", help="synth-ai 0.2.24's flag: the live chart (--stream-format chart)."),
    _a("--show-curve", dest="show_curve", action="store_true",
       help="synth-ai 0.2.24's flag: the final block's curve, drawn when the job ends (always, unless the live "
            "chart was on screen)."),
    _a("--verbose-summary", dest="verbose_summary", action="store_true",
       help="synth-ai 0.2.24's flag: the full final block (always printed)."),
)

TRAIN_ARGUMENTS: tuple[ArgSpec, ...] = (
    _a("config_paths", nargs="*", default=None, metavar="CONFIG", type=path_text,
       help="Training TOML(s), as with --config (synth-ai 0.2.24's `synth-ai train configs/x.toml`)."),
    _a("--config", "-c", dest="configs", action="append", default=None, metavar="PATH", type=path_text,
       default_is="the one training config in the folder, a picker on a terminal when there are several",
       help="Training TOML (repeatable: one job per config)."),
    *SECRET_FLAGS,
    *TARGET_FLAGS,
    *(_row(row) for row in CORE_ROWS),
    _a("--poll", dest="poll", action=argparse.BooleanOptionalAction, default=True,
       help="Stream the job until it ends, or return after submission (--no-poll prints only the job ids on "
            "stdout)."),
    _a("--dry-run", action="store_true", help="Validate and print exactly what would be sent; send nothing."),
    _a("--json", dest="json_output", action="store_true", help="With --dry-run: print the plan as JSON."),
    _a("--verbose", "-v", dest="verbose", action="store_true",
       help="Before submitting, show every request's full payload (secrets masked) instead of the one-screen "
            "summary; --dry-run always shows it in full."),
    _a("--yes", "-y", action="store_true",
       help="Submit without the confirmation step (the terminal's question, the notebook's wizard)."),
    _a("--wait", action="store_true", help="Block until the job ends (notebook)."),
    _a("--attach", default=None, metavar="JOB_ID", type=job_id,
       help="Re-attach to an existing job instead of submitting."),
    ALL_EVENTS,
    _a("--jobs", dest="list_jobs", action="store_true", help="List jobs submitted from this folder."),
    _a("--compare", nargs="*", default=None, metavar="JOB_ID", type=job_id,
       help="Compare runs (curves, final metrics, config differences); no ids: every job from this folder."),
    _a("--check", action="store_true",
       help="Pre-flight card: task app, one dry rollout, dataset and an estimate; sends no job (implies --dry-run)."),
    _a("--rerun", default=None, metavar="JOB_ID", type=job_id,
       help="Submit a finished job's plan again from its bundle (exit 2 if the config changed since); "
            "--task-url is the one override it takes."),
    _a("--fork", default=None, metavar="JOB_ID", type=job_id,
       help="Start a new job from a finished one's bundle: the wizard prefilled and diffed against it (notebook), "
            "or its config written to a new TOML to edit (terminal)."),
    _a("--out", dest="fork_out", default=None, metavar="PATH", type=path_text,
       default_is="beside the job's config", help="With --fork: write the forked config here."),
    *FOLLOW_FLAGS,
    *REPORT_FLAGS,
    *SYNTH_AI_FLAGS,
)

def synth_ai_flags(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (parsed flags by dest) with synth-ai 0.2.24's own flags read as their nearest meaning: ``--tui``
    is ``--stream-format chart``; ``--show-curve`` and ``--verbose-summary`` ask for what the final block always
    shows. ``--local-backend`` did nothing in 0.2.24 (the job went to the hosted backend), so reading it as the
    embedded backend would move a script's jobs: a ``ConfigError`` (exit 2) names the flag to use instead."""
    out = dict(values)
    if out.pop("local_backend", False):
        instead = ("drop it: --backend already says where jobs go" if out.get("backend")
                   else "use --backend local for the embedded local backend (or --backend URL)")
        raise ConfigError(f"--local-backend is synth-ai 0.2.24's flag, which did nothing there: {instead}")
    if out.get("tui"):  # kept: a warning about it names the flag typed
        if out.get("stream_format") not in (None, "chart"):
            raise ConfigError(f"--tui is --stream-format chart, and --stream-format {out['stream_format']} asks for "
                              "another display: drop one of them")
        out["stream_format"] = "chart"
    out.pop("show_curve", None)
    out.pop("verbose_summary", None)
    return out


#: the watchdog's flags, as argparse dests (``synth_nb.job.budget.Limits`` fields)
LIMIT_FLAGS = ("max_minutes", "max_rollouts", "max_tokens", "stop_on_plateau")


def override_dests() -> tuple[str, ...]:
    """The dests of every flag that overrides a config value, the registered flows' own included."""
    return tuple(row.name for row in override_rows())


def train_arguments() -> tuple[ArgSpec, ...]:
    """``TRAIN_ARGUMENTS`` and the flags of the registered flows' own override rows."""
    own = [row for row in override_rows() if row.name not in OVERRIDE_FLAGS]
    return (*TRAIN_ARGUMENTS, *(_row(row) for row in own))


def add_train_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    return add_flags(parser, train_arguments())


def build_train_parser(prog: str = "synth-nb train") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Launch an RL, SFT or prompt-learning job from TOML config(s)."
    )
    return add_train_arguments(parser)
