"""Re-running a finished job from its bundle: the same plan again, or the reason it would not be the same.

The config is read where it was (so relative dataset paths still resolve) and must be byte for byte what
the bundle kept (its sha256); each uploaded dataset must hash the same; the plan rebuilt with the parent's
overrides must equal the parent's masked plan. Only the idempotency key is new (a fresh one per
submission); a backend that now listens elsewhere (the embedded one, restarted) is said, not hidden, and so
is a task app that does: one given now with ``--task-url``, or the embedded backend's own copy of a bundled
example task app, which moves with it. Anything else is a diff, and nothing is submitted.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth_nb.backend import LOCAL
from synth_nb.errors import ConfigError
from synth_nb.pipeline import bundled_apps
from synth_nb.pipeline.bundle import find_bundle, mask_toml, read_bundle, sha256_of
from synth_nb.pipeline.preflight import task_app_for
from synth_nb.pipeline.prepare import (
    Prepared,
    Say,
    SecretSources,
    build_overrides,
    limit_rollouts,
    prepare_config,
)
from synth_nb.pipeline.target import Target
from synth_nb.plan import mask_payload

__all__ = ["NOT_REPEATED", "Rerun", "backend_of", "parent_backend", "parent_limits", "plan_rerun"]

#: overrides a re-run (or a fork) never repeats: a fresh key per submission, and the backend it is sent to now
NOT_REPEATED = ("idempotency", "backend")


@dataclass
class Rerun:
    """A parent job's bundle beside the plan it would be submitted with now."""

    job_id: str
    bundle: Path
    prepared: Prepared
    config_diff: list[str] = field(default_factory=list)
    dataset_diff: list[str] = field(default_factory=list)
    plan_diff: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not (self.config_diff or self.dataset_diff or self.plan_diff)

    def lines(self) -> list[str]:
        plan = self.prepared.plan
        out = [f"re-run of job {self.job_id} from {self.bundle}", *self.notes]
        if self.same and plan is not None:
            return [*out, f"diff against job {self.job_id}: none (the same plan; new idempotency key "
                          f"{plan.idempotency_key})"]
        if self.config_diff:
            out += ["the config on disk changed since the job was submitted:", *self.config_diff]
        out += self.dataset_diff
        if self.plan_diff:
            out += ["the plan differs from the job's:", *self.plan_diff]
        return [*out, "nothing was submitted: restore the config, or submit it as a new job without --rerun"]


def parent_backend(job_id: str, folder: Path) -> str:
    """Where a re-run goes by default: the embedded backend again, else the parent's backend URL."""
    return backend_of(read_bundle(find_bundle(job_id, folder)))


def parent_limits(job_id: str, folder: Path) -> dict[str, float]:
    """The budget limits (``--max-rollouts`` ...) job ``job_id`` was sent with, by flag dest; a re-run given
    none repeats them (some are in its job body, which must be the same)."""
    limits = read_bundle(find_bundle(job_id, folder)).get("limits")
    return {str(k): v for k, v in limits.items() if isinstance(v, int | float)} if isinstance(limits, dict) else {}


def backend_of(parent: dict[str, Any]) -> str:
    """``local`` for a job the embedded backend ran (wherever it listens now), else the job's backend URL."""
    return LOCAL if parent.get("embedded") else str(parent.get("backend_url") or "")


def _moved(url: str, parent: dict[str, Any], target: Target) -> str | None:
    """Where the bundled task app the parent's embedded backend served at ``url`` is served now, if it moved."""
    return bundled_apps.moved(url, str(parent.get("backend_url") or ""), bool(parent.get("embedded")), target)


def _diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    return [line.rstrip("\n") for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name)]


def _config(parent: dict[str, Any], secrets: list[str]) -> tuple[Path, list[str]]:
    """The parent's config path, and its diff when the file is no longer what was submitted."""
    raw = parent.get("config_path")
    if not raw:
        raise ConfigError(f"the bundle of job {parent.get('job_id')} names no config file, so it cannot be re-run")
    path = Path(raw)
    if not path.is_file():
        raise ConfigError(f"the config of job {parent.get('job_id')} is gone ({path}); restore it to re-run",
                          path=path)
    if sha256_of(path) == parent.get("config_sha256"):
        return path, []
    now = mask_toml(path.read_text(encoding="utf-8", errors="replace"), secrets)
    diff = _diff(parent.get("config_text") or "", now, "submitted", f"{path} now")
    return path, diff or [f"{path}: the bytes changed (whitespace or encoding) since the job was submitted"]


def _datasets(parent: dict[str, Any], prepared: Prepared) -> list[str]:
    then = {d.get("ref"): d for d in parent.get("datasets") or []}
    steps = [s for s in (prepared.plan.steps if prepared.plan else []) if s.kind == "upload" and s.upload]
    out = []
    for step in steps:
        assert step.upload is not None
        old = then.get(step.ref) or {}
        sha = sha256_of(step.upload)
        if old.get("sha256") != sha:
            out.append(f"dataset {step.ref} ({step.upload}): sha256 {old.get('sha256') or 'none'} then, {sha} now")
    return out


def _paths(doc: Any, value: str, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where ``value`` is in a JSON document, as key/index paths."""
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in _paths(v, value, (*at, k))]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in _paths(v, value, (*at, i))]
    return [at] if doc == value else []


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        try:
            doc = doc[step]
        except (KeyError, IndexError, TypeError):
            return None
    return doc


def _moved_task_app(parent: dict[str, Any], prepared: Prepared, target: Target, given: str | None,
                    notes: list[str]) -> tuple[str, str] | None:
    """``(then, now)`` when the re-run's task app is elsewhere only because it was asked for (``--task-url``)
    or because it is the embedded backend's own copy, which moved with the backend; None otherwise."""
    assert prepared.plan is not None
    app = task_app_for(prepared)
    if app is None:
        return None
    now = str(mask_payload(app.url))
    olds = {_at(parent["plan"], p) for p in _paths(prepared.plan.preview(), now)}
    then = olds.pop() if len(olds) == 1 else None
    if not isinstance(then, str) or then == now:
        return None
    if given is not None and app.url == given:
        notes.append(f"task app: the job used {then}, the re-run uses {now} (--task-url)")
    elif _moved(then, parent, target) != app.url:
        return None
    return then, now


def _plan_diff(parent: dict[str, Any], prepared: Prepared, notes: list[str],
               moved: tuple[str, str] | None = None) -> list[str]:
    assert prepared.plan is not None
    then = json.dumps(parent["plan"], indent=2, sort_keys=True, ensure_ascii=False)
    now = json.dumps(prepared.plan.preview(), indent=2, sort_keys=True, ensure_ascii=False)
    if moved is not None:  # said already: the diff is about what the job does
        now = now.replace(json.dumps(moved[1])[1:-1], json.dumps(moved[0])[1:-1])
    old_url, new_url = str(parent.get("backend_url") or ""), prepared.plan.backend_url
    if old_url and new_url and old_url != new_url:
        notes.append(f"backend: the job ran on {old_url}, the re-run goes to {new_url}")
        now = now.replace(json.dumps(new_url)[1:-1], json.dumps(old_url)[1:-1])
    return _diff(then, now, f"job {parent.get('job_id')}", "re-run") if then != now else []


def plan_rerun(job_id: str, folder: Path, target: Target, sources: SecretSources, *,
               task_url: str | None = None, rollout_limit: int | None = None, say: Say = print) -> Rerun:
    """Rebuild job ``job_id``'s plan from its bundle against ``target``, with every difference found.

    ``task_url`` (``--task-url``) beats the task app the job was given; ``rollout_limit`` (``--max-rollouts``)
    is written into the plan as ``send`` would, before it is compared. Raises ``ConfigError`` when there is
    no bundle, no config file, or the config no longer prepares.
    """
    bundle = find_bundle(job_id, folder)
    parent = read_bundle(bundle)
    path, config_diff = _config(parent, [])
    values = {k: v for k, v in (parent.get("overrides") or {}).items() if k not in NOT_REPEATED}
    notes: list[str] = []
    recorded = values.get("task_url")
    if task_url is not None:
        values["task_url"] = task_url
    elif isinstance(recorded, str) and (moved := _moved(recorded, parent, target)) is not None:
        values["task_url"] = moved
        notes.append(f"task app: the job used the embedded backend's bundled "
                     f"{bundled_apps.name_at(recorded, str(parent.get('backend_url')))!r} task app at {recorded}; "
                     f"the re-run uses its copy on the backend now running, at {moved}")
    prepared = prepare_config(path, overrides=build_overrides(values, target), target=target, sources=sources,
                              say=say)
    limit_rollouts([prepared], rollout_limit)
    if not prepared.ok:
        raise prepared.error or ConfigError(f"{path}: the config of job {job_id} no longer prepares")
    if config_diff:  # the diff shown must mask what this config's secrets resolve to
        assert prepared.plan is not None
        _, config_diff = _config(parent, [s.get_secret_value() for s in prepared.plan.secrets])
    rerun = Rerun(job_id, bundle, prepared, config_diff=config_diff, notes=notes)
    rerun.dataset_diff = _datasets(parent, prepared)
    moved_app = _moved_task_app(parent, prepared, target, task_url, rerun.notes)
    rerun.plan_diff = _plan_diff(parent, prepared, rerun.notes, moved_app)
    if any("max_rollouts" in line for line in rerun.plan_diff):
        rerun.notes.append("--max-rollouts is sent with the job (a re-run given no limit repeats the job's own): "
                           "submit a changed limit as a new job (--fork)")
    return rerun
