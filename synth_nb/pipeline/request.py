"""The ``train`` flags as one door-neutral ``Request``, built once per call by ``synth-nb train``,
``%synth_train`` or the wizard, and the rule that picks the one action it asks for.

Every flag means the same on every door: the request is what the actions (``synth_nb.pipeline.actions``)
read, so no door interprets a flag on its own. A notebook's relative paths mean "next to the notebook",
so the notebook builds its request with ``anchor=True`` (every path resolved against its folder, once);
the terminal keeps paths as typed (relative to the working directory, which is its folder). Values are
checked as the request is made (the limits parsed into ``Limits``, the poll durations), so a bad one fails
before anything is sent, whoever built the request.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from synth_nb.config import config_path
from synth_nb.errors import ConfigError
from synth_nb.job.budget import Limits
from synth_nb.pipeline.flags import LIMIT_FLAGS, override_dests, synth_ai_flags
from synth_nb.pipeline.prepare import SecretSources
from synth_nb.report import ReportOptions

__all__ = ["ACTIONS", "Following", "Request"]

#: the action a request asks for, by the flag that selects it (at most one); none of them: a new job
SELECTORS: tuple[tuple[str, str], ...] = (
    ("jobs", "--jobs"), ("attach", "--attach"), ("compare", "--compare"), ("rerun", "--rerun"), ("fork", "--fork"),
)

#: (what the request is about, how far it goes) -> the action run; a missing pair is a usage error
ACTIONS: dict[tuple[str, str], str] = {
    ("new", "send"): "submit",
    ("new", "dry_run"): "prepare",
    ("new", "check"): "check",
    ("rerun", "send"): "rerun",
    ("rerun", "dry_run"): "rerun",
    ("rerun", "check"): "check",
    ("fork", "send"): "fork",
    ("fork", "dry_run"): "fork",
    ("attach", "send"): "attach",
    ("attach", "dry_run"): "attach",
    ("compare", "send"): "compare",
    ("compare", "dry_run"): "compare",
    ("jobs", "send"): "jobs",
    ("jobs", "dry_run"): "jobs",
}


def _anchored(folder: Path, raw: str | Path, anchor: bool) -> Path:
    path = Path(raw)
    if not anchor:
        return path
    path = path.expanduser()
    return path if path.is_absolute() else folder / path


def _config(folder: Path, raw: str | Path, anchor: bool) -> Path:
    """A config path as typed (``real.toml/`` is refused, see ``config_path``), anchored like the others."""
    text = os.path.expanduser(str(raw))
    if anchor and not os.path.isabs(text):
        text = os.path.join(folder, text)
    return config_path(text)


#: flags that act while a job is followed, by argparse dest (``--max-rollouts`` is also sent with the jobs whose
#: flow has a field for it: ``prepare`` refuses it with ``--no-poll`` for the others)
_FOLLOW_ONLY = {"max_minutes": "--max-minutes", "max_tokens": "--max-tokens", "stop_on_plateau": "--stop-on-plateau",
                "record": "--record", "report_to": "--report-to"}


def _nothing_follows(values: Mapping[str, Any]) -> None:
    """``--no-poll`` returns once the jobs exist: a flag that only acts while a job is followed would do nothing,
    which is a usage error to say before anything is sent (synth-ai 0.2.24 had none of these flags)."""
    if values.get("poll", True) is not False:
        return
    given = [flag for dest, flag in _FOLLOW_ONLY.items() if values.get(dest)]
    if given:
        raise ConfigError(f"{', '.join(given)} {'acts' if len(given) == 1 else 'act'} only while a job is followed, "
                          "and --no-poll follows nothing: drop --no-poll (or follow the job later with "
                          f"--attach JOB_ID {' '.join(given)})", key=given[0])


def ignored_flags(values: Mapping[str, Any]) -> list[str]:
    """Flags synth-ai 0.2.24 accepted and ignored in this combination: one warning line each, nothing refused."""
    out = []
    if values.get("poll", True) is False and values.get("stream_format") == "chart":
        flag = "--tui" if values.get("tui") else "--stream-format chart"
        out.append(f"{flag} is ignored with --no-poll: no job is followed, so nothing is drawn")
    return out


@dataclass(frozen=True)
class Following:
    """How the jobs a request sends or attaches to are followed (``synth_nb.pipeline.follow``)."""

    #: False (``--no-poll``): nothing follows them; the command returns once they exist
    poll: bool = True
    #: ``--poll-interval``, ``--poll-timeout`` (None: no bound)
    interval: float = 5.0
    timeout: float | None = None
    #: the budget watchdog's limits; None when nothing is to watch (none given, or ``--no-poll``)
    limits: Limits | None = None
    #: ``--record``: one JSONL recording per job
    record: Path | None = None
    #: ``--report-to`` & co.
    report: ReportOptions = field(default_factory=ReportOptions)


@dataclass
class Request:
    """The parsed ``train`` flags, paths resolved where the door says they are relative to."""

    folder: Path
    configs: list[Path] = field(default_factory=list)
    env_files: list[Path] = field(default_factory=list)
    modal_secrets: list[str] = field(default_factory=list)
    backend: str | None = None
    #: override values by flag dest (``model``, ``task_url``...), only those given
    overrides: dict[str, Any] = field(default_factory=dict)
    yes: bool = False
    wait: bool = False
    dry_run: bool = False
    json_output: bool = False
    #: ``--verbose``: the preview before submitting shows every payload in full (default: the compact summary)
    verbose: bool = False
    poll: bool = True
    poll_interval: float = 5.0
    poll_timeout: float | None = None
    #: ``--stream-format``: "cli", "chart", "quiet", or None (cli on a terminal, quiet off it)
    stream_format: str | None = None
    attach: str | None = None
    #: ``attach``: the job's flow when the registry does not know it (otherwise probed)
    flow: str | None = None
    #: ``attach``: print every event of the job's history (default: a note and the newest lines)
    all_events: bool = False
    list_jobs: bool = False
    #: ``--compare [ID ...]``: the job ids to compare (empty: every job from the folder), None: not asked
    compare: list[str] | None = None
    record: Path | None = None
    #: ``--check``: the pre-flight card of what would be sent; sends no job
    check: bool = False
    #: ``--rerun JOB_ID``: submit that job's plan again from its bundle
    rerun: str | None = None
    #: ``--fork JOB_ID``: start a new job from that job's bundle (``--out``: where its config goes)
    fork: str | None = None
    fork_out: Path | None = None
    #: the watchdog's limits (``--max-minutes`` ...); given as flag values by dest, they are parsed here
    limits: Limits = field(default_factory=Limits)
    #: ``--report-to`` & co. (a notebook's relative ``--report-dir`` is under its folder)
    report: ReportOptions = field(default_factory=ReportOptions)
    #: flags given that this request ignores, each said as one warning line by the door (``ignored_flags``)
    ignored: list[str] = field(default_factory=list)
    #: keys pasted into the wizard, and the environment secrets are read from (None: the process's own)
    pasted: dict[str, SecretStr] = field(default_factory=dict, repr=False)
    environ: Mapping[str, str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.limits, Limits):  # flag values by dest, from a caller that did not parse them
            self.limits = Limits.from_values(self.limits)
        for flag, value in (("--poll-interval", self.poll_interval), ("--poll-timeout", self.poll_timeout)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(f"{flag} must be a finite number of seconds above 0, got {value!r}", key=flag)

    @property
    def following(self) -> Following:
        """How its jobs are followed: with ``--no-poll`` not at all (no watchdog either)."""
        limits = self.limits if self.poll and self.limits.any else None
        return Following(self.poll, self.poll_interval, self.poll_timeout, limits, self.record, self.report)

    @classmethod
    def from_args(cls, args: argparse.Namespace, folder: Path, *, anchor: bool = True) -> Request:
        """The request of parsed flags; a bad limit fails here, before anything is sent."""
        values = synth_ai_flags(vars(args))  # synth-ai 0.2.24's own flags as their nearest meaning
        overrides = {name: values.get(name) for name in override_dests()}
        if overrides.get("dataset"):
            overrides["dataset"] = str(_anchored(folder, str(overrides["dataset"]), anchor))
        configs = [*(values.get("config_paths") or []), *(values.get("configs") or [])]
        record, fork_out = values.get("record"), values.get("fork_out")
        for flag, given, needs in (("--out", fork_out is not None, "fork"), ("--all-events", values.get("all_events"),
                                                                             "attach")):
            if given and not values.get(needs):  # a flag that would be silently ignored is a mistake to say
                raise ConfigError(f"{flag} is only used with --{needs} JOB_ID", key=flag)
        _nothing_follows(values)
        return cls(
            folder=folder,
            configs=[_config(folder, c, anchor) for c in configs],
            env_files=[_anchored(folder, e, anchor) for e in values.get("env_files") or []],
            modal_secrets=list(values.get("modal_secrets") or []),
            backend=values.get("backend"),
            overrides={k: v for k, v in overrides.items() if v is not None},
            yes=bool(values.get("yes")),
            wait=bool(values.get("wait")),
            dry_run=bool(values.get("dry_run")),
            json_output=bool(values.get("json_output")),
            verbose=bool(values.get("verbose")),
            poll=bool(values.get("poll", True)),
            poll_interval=float(values.get("poll_interval") or 5.0),
            poll_timeout=values.get("poll_timeout"),
            stream_format=values.get("stream_format") or None,
            attach=values.get("attach"),
            flow=values.get("flow"),
            all_events=bool(values.get("all_events")),
            list_jobs=bool(values.get("list_jobs")),
            compare=None if values.get("compare") is None else list(values["compare"]),
            record=None if record is None else _anchored(folder, record, anchor),
            check=bool(values.get("check")),
            rerun=values.get("rerun"),
            fork=values.get("fork"),
            fork_out=None if fork_out is None else _anchored(folder, fork_out, anchor),
            limits=Limits.from_values({k: values.get(k) for k in LIMIT_FLAGS}),
            report=ReportOptions.from_values(values, folder if anchor else None),
            ignored=ignored_flags(values),
        )

    @property
    def subject(self) -> str:
        """What the request is about: ``new`` configs, or the one selector flag given."""
        given = [(name, flag) for name, flag in SELECTORS if self._selected(name)]
        if len(given) > 1:
            raise ConfigError(f"{' and '.join(flag for _, flag in given)} cannot be used together: "
                              "each picks what the command does; give one")
        return given[0][0] if given else "new"

    def _selected(self, name: str) -> bool:
        return {"jobs": self.list_jobs, "attach": bool(self.attach), "compare": self.compare is not None,
                "rerun": bool(self.rerun), "fork": bool(self.fork)}[name]

    @property
    def stage(self) -> str:
        """How far it goes: ``check`` (the pre-flight card), ``dry_run`` (shown only) or ``send``."""
        return "check" if self.check else "dry_run" if self.dry_run else "send"

    @property
    def action(self) -> str:
        """The one action this request asks for (``synth_nb.pipeline.actions``); a combination that means
        nothing (``--check --attach``) is a ``ConfigError`` (exit 2 / UsageError)."""
        subject, stage = self.subject, self.stage
        if self.json_output and stage == "send":
            raise ConfigError("--json only applies to --dry-run (add --dry-run)")
        try:
            return ACTIONS[(subject, stage)]
        except KeyError:
            flag = {"check": "--check", "dry_run": "--dry-run"}[stage]
            selector = dict(SELECTORS)[subject]
            raise ConfigError(f"{flag} does not apply to {selector}: {selector} sends no job to check or preview; "
                              f"drop {flag}") from None

    def sources(self, environ: Mapping[str, str] | None = None) -> SecretSources:
        """Where this request's secrets come from (``.env`` files are looked for from its folder)."""
        environ = environ if environ is not None else self.environ if self.environ is not None else os.environ
        return SecretSources(env_files=tuple(self.env_files), modal_secrets=tuple(self.modal_secrets),
                             pasted=dict(self.pasted), environ=dict(environ), cwd=self.folder)
