"""Forking a finished job: its config as submitted and its overrides, as the start of a new job.

A re-run repeats a job exactly; a fork is where a changed job starts. The config is the parent's file
when it still hashes as submitted, else the bundled copy written beside it (relative dataset paths and
the results folder then resolve as they did). The overrides are the parent's, less the ones a new job
never repeats (its idempotency key, the backend URL it happened to have). The parent's masked plan is
kept as the baseline the new job's preview is diffed against.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth_nb.backend import LOCAL, display_url
from synth_nb.errors import ConfigError
from synth_nb.pipeline import bundled_apps
from synth_nb.pipeline.bundle import find_bundle, read_bundle, sha256_of
from synth_nb.pipeline.prepare import Say
from synth_nb.pipeline.rerun import NOT_REPEATED, backend_of
from synth_nb.pipeline.target import resolve_target
from synth_nb.untrusted import contained

__all__ = ["Fork", "follow_bundled_app", "fork_job"]

#: how ``synth_nb.secrets.mask`` shows a value: a bundled config holding one lost a literal secret
_MASK = "••••"


@dataclass
class Fork:
    """A parent job's config, overrides and plan, ready to open in the wizard or to edit and submit."""

    job_id: str
    bundle: Path
    #: the config the fork starts from: the parent's own file, or the bundled copy written for it
    config: Path
    #: the parent's overrides by flag dest (``model``, ``task_url``...), less idempotency key and backend
    overrides: dict[str, Any]
    #: ``local`` when the embedded backend ran the parent, else the parent's backend URL
    backend: str
    #: the parent's masked plan document (``plan.json``)
    plan: dict[str, Any]
    parent_backend_url: str = ""
    #: True when the embedded backend ran the parent (its bundled task apps moved with it)
    parent_embedded: bool = False
    #: True when ``config`` was written by this fork (the parent's file changed, or ``out`` was asked for)
    written: bool = False
    notes: list[str] = field(default_factory=list)

    def baseline(self, backend_url: str = "") -> str:
        """The parent's plan as the preview shows a plan, its backend URL replaced by where a fork goes now."""
        text = json.dumps(self.plan, indent=2, ensure_ascii=False)
        if backend_url and self.parent_backend_url and backend_url != self.parent_backend_url:
            text = text.replace(json.dumps(self.parent_backend_url)[1:-1], json.dumps(backend_url)[1:-1])
        return text

    def command(self, cwd: Path, prog: str = "synth-nb train") -> str:
        """The ``prog`` line (``synth-nb train``, ``%synth_train``) that submits the fork with the parent's overrides."""
        words = ["--config", _shown_path(self.config, cwd)]
        if self.backend:
            words += ["--backend", display_url(self.backend)]  # credentials in a URL are masked
        for name, value in self.overrides.items():
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                words.append(flag if value else f"--no-{flag[2:]}")
            elif isinstance(value, list):  # seeds, as the flag takes them
                words += [flag, ",".join(str(v) for v in value)]
            else:
                words += [flag, str(value)]
        return f"{prog} {shlex.join(words)}"

    def summary(self, cwd: Path) -> list[str]:
        """Where the config is (and whether it was written), with anything to know about it."""
        what = "wrote" if self.written else "using"
        return [f"fork of job {self.job_id} (bundle {_shown_path(self.bundle, cwd)})",
                f"{what} {_shown_path(self.config, cwd)}: the config as job {self.job_id} submitted it", *self.notes]

    def lines(self, cwd: Path, prog: str = "synth-nb train") -> list[str]:
        """What the terminal says: the summary, and how to submit the fork (edit it first)."""
        return [*self.summary(cwd), "edit it, then preview with --dry-run or submit:", f"  {self.command(cwd, prog)}"]


def _shown_path(path: Path, cwd: Path) -> str:
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return str(path)


def _default_copy(original: Path | None, bundle: Path, job_id: str) -> Path:
    """Beside the parent's config (relative paths in it keep their meaning), else in the bundle."""
    if original is not None and original.parent.is_dir():
        return contained(original.parent, f"{original.stem}.fork-{job_id}.toml")
    return contained(bundle, f"config.fork-{job_id}.toml")


def _write(path: Path, text: str) -> None:
    if path.exists():
        if path.read_text(encoding="utf-8", errors="replace") == text:
            return  # the same fork asked for again
        raise ConfigError(f"{path} exists and differs from the job's bundled config; edit it and submit it, or name "
                          "another file with --out", path=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _submitted_text(parent: dict[str, Any], original: Path | None, notes: list[str]) -> str:
    """The config as submitted: the parent's unchanged file itself (``original``), else the bundled copy."""
    if original is not None:
        return original.read_text(encoding="utf-8")
    job_id, text, raw = parent.get("job_id"), parent.get("config_text"), parent.get("config_path")
    if text is None:
        raise ConfigError(f"the bundle of job {job_id} kept no config.toml, so it cannot be forked")
    if raw:
        notes.append(f"{raw} changed since job {job_id} was submitted: the fork starts from the bundled copy")
    if _MASK in text:
        notes.append("the bundled config masks literal secrets (••••): put them back, or read them from "
                     "the environment or a .env file")
    return str(text)


def fork_job(job_id: str, folder: Path, *, out: Path | None = None, copy: bool = False) -> Fork:
    """The fork of ``job_id``, whose bundle is found as ``--rerun`` finds it.

    ``copy`` (the terminal, where the user edits a file) or ``out`` always writes the config as a new file;
    otherwise the parent's own file is used while it is byte for byte what was submitted.
    Raises ``ConfigError`` when there is no bundle, or it kept no config.
    """
    bundle = find_bundle(job_id, folder)
    parent = read_bundle(bundle)
    raw = parent.get("config_path")
    original = Path(raw) if raw else None
    unchanged = original is not None and original.is_file() and sha256_of(original) == parent.get("config_sha256")
    notes: list[str] = []
    if unchanged and not copy and out is None:
        assert original is not None
        config, written = original, False
    else:
        config = out if out is not None else _default_copy(original, bundle, job_id)
        _write(config, _submitted_text(parent, original if unchanged else None, notes))
        written = True
    overrides = {k: v for k, v in (parent.get("overrides") or {}).items() if k not in NOT_REPEATED and v is not None}
    return Fork(job_id, bundle, config.resolve(), overrides, backend_of(parent), dict(parent.get("plan") or {}),
                parent_backend_url=str(parent.get("backend_url") or ""), parent_embedded=bool(parent.get("embedded")),
                written=written, notes=notes)


def follow_bundled_app(fork: Fork, say: Say = print) -> None:
    """A parent's ``--task-url`` naming its embedded backend's own bundled task app must not pin the old port.

    The embedded backend serves its copy wherever it listens now: the override is dropped when the config
    names that task app (the backend's copy is then found by name), else it points at the running backend.
    """
    url = fork.overrides.get("task_url")
    name = bundled_apps.name_at(url, fork.parent_backend_url) if isinstance(url, str) else None
    if fork.backend != LOCAL or not fork.parent_embedded or name is None:
        return
    assert isinstance(url, str)
    said = f"the job used the embedded backend's bundled {name!r} task app at {url}: the fork uses "
    if name == bundled_apps.named_in(fork.config):
        del fork.overrides["task_url"]
        fork.notes.append(said + "the embedded backend's copy, wherever it listens now")
        return
    moved = bundled_apps.moved(url, fork.parent_backend_url, True, resolve_target(LOCAL, say=say))
    if moved is not None:
        fork.overrides["task_url"] = moved
        fork.notes.append(said + f"its copy on the backend now running, at {moved}")
