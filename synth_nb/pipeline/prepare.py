"""From TOML files to plans: discover the configs, load one, resolve its secrets, build its plan.

Every stage keeps what it found in a ``Prepared`` and the first failure stops that config only, so the
CLI can report every broken config at once and the wizard can show each one's secrets and errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from synth_nb.errors import ConfigError, SynthNbError
from synth_nb.pipeline.preflight import check_task_app, task_app_for
from synth_nb.pipeline.target import Target, api_key
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, SecretBundle, resolve_secrets

if TYPE_CHECKING:
    from synth_nb.config import DiscoveredConfig, LoadedConfig
    from synth_nb.flows.overrides import Overrides
    from synth_nb.plan import Plan

__all__ = [
    "Prepared",
    "SecretSources",
    "build_overrides",
    "bundled_app_name",
    "check_together",
    "choose_configs",
    "discover",
    "limit_rollouts",
    "prepare",
    "raise_problems",
    "required_secrets",
]


def discover(folder: Path) -> list[DiscoveredConfig]:
    """Training configs under ``folder``, plus TOML files that do not parse (maybe broken training configs).

    TOML files that parse but are not training configs (``pyproject.toml``) are left out.
    """
    from synth_nb.config import discover_configs

    return [c for c in discover_configs(folder) if c.is_training_config or _unreadable(c)]


def _unreadable(found: DiscoveredConfig) -> bool:
    return found.flow is None and found.error not in (None, "not a training config")


def choose_configs(folder: Path, *, several: bool) -> list[DiscoveredConfig]:
    """The configs to use when none is named: the only valid one, or (``several``) every valid one.

    Anything else is a ``ConfigError`` listing every candidate with its state, asking for ``--config``.
    """
    found = discover(folder)
    valid = [c for c in found if c.valid]
    if valid and (len(valid) == 1 or several):
        return valid
    if not found:
        raise ConfigError(f"no training config found under {folder}",
                          hint="pass --config PATH to a training TOML")
    listing = "\n".join(_candidate_line(c, folder) for c in found)
    if not valid:
        raise ConfigError(f"no valid training config under {folder}; fix one or pass --config PATH:\n{listing}")
    invalid = len(found) - len(valid)
    counted = f" ({len(valid)} valid, {invalid} invalid)" if invalid else " (all valid)"
    raise ConfigError(f"{len(found)} training configs found under {folder}{counted}; choose one with "
                      f"--config PATH:\n{listing}")


def _candidate_line(found: DiscoveredConfig, folder: Path) -> str:
    kind = (found.flow or "unreadable") + (f"/{found.algorithm}" if found.algorithm else "")
    state = "valid" if found.valid else f"invalid: {(found.error or '').splitlines()[0][:120]}"
    try:
        where = found.path.resolve().relative_to(folder.resolve())
    except ValueError:
        where = found.path
    return f"  [{kind}] {where}  ({state})"


@dataclass(frozen=True)
class SecretSources:
    """Where secrets come from, besides the defaults (process environment, nearest ``.env`` files).

    ``pasted`` are keys typed into the wizard; ``environ``/``cwd`` default to the process's own.
    """

    env_files: tuple[Path, ...] = ()
    modal_secrets: tuple[str, ...] = ()
    pasted: Mapping[str, SecretStr] = field(default_factory=dict)
    environ: Mapping[str, str] | None = None
    cwd: Path | None = None

    def resolve(self, target: Target, config_path: Path | None = None) -> SecretBundle:
        """Every key with its source; the embedded backend's own key replaces any other SYNTH_API_KEY, and
        its example task apps' key stands in for a missing ENVIRONMENT_API_KEY."""
        bundle = resolve_secrets(config_path=config_path, env_files=self.env_files,
                                 modal_secrets=self.modal_secrets, environ=self.environ, cwd=self.cwd)
        for name, value in self.pasted.items():
            bundle = bundle.with_value(name, value.get_secret_value(), source="pasted")
        if target.own_key:
            bundle = bundle.with_value(SYNTH_API_KEY, target.own_key, source="local backend")
        if target.task_app_key and not bundle.secret_value(ENVIRONMENT_API_KEY):
            bundle = bundle.with_value(ENVIRONMENT_API_KEY, target.task_app_key,
                                       source="local backend (its example task apps)")
        return bundle

    def api_key(self, target: Target) -> str:
        """The key to send to ``target`` when no config is involved (re-attaching, listing)."""
        return target.own_key or api_key(target, [self.resolve(target)])


def build_overrides(values: Mapping[str, Any], target: Target) -> Overrides:
    """``Overrides`` from flag values (None means "not given"; an empty value is refused) aimed at ``target``.

    A bad value raises ``OverrideError`` naming the flag and carrying its ``field``.
    """
    from synth_nb.flows import override_rows
    from synth_nb.flows.overrides import Overrides

    data = {k: v for k, v in values.items() if v is not None and k != "backend"}
    return Overrides.build(override_rows(), **data, backend=target.url)


def limit_rollouts(items: Sequence[Prepared], limit: int | None) -> None:
    """Write ``--max-rollouts`` into each plan's job body where its flow has a field for it, so the backend stops
    at the limit itself; a plan the limit cannot apply to gets the error (``ConfigError``) instead."""
    from synth_nb.flows import get_flow

    if limit is None:
        return
    for item in items:
        if item.plan is None or item.error is not None:
            continue
        try:
            item.plan = get_flow(item.plan.flow).with_rollout_limit(item.plan, limit)
        except ConfigError as exc:
            item.error = exc


@dataclass
class Prepared:
    """One config on its way to a job: every stage keeps what it found, the first failure stops it."""

    path: Path
    config: LoadedConfig | None = None
    secrets: SecretBundle | None = None
    #: the secrets this job cannot be submitted without (known once the config has loaded)
    required: tuple[str, ...] = ()
    plan: Plan | None = None
    error: SynthNbError | None = None
    #: the overrides the plan was built with (kept in the job's bundle)
    overrides: Overrides | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.plan is not None

    @property
    def missing(self) -> list[str]:
        return self.secrets.missing(self.required) if self.secrets is not None else list(self.required)


def prepare(path: Path, *, overrides: Overrides, target: Target, sources: SecretSources) -> Prepared:
    """Load, resolve secrets and build the plan for one config; never raises a ``SynthNbError``."""
    from synth_nb.config import load_config
    from synth_nb.flows import plan_for

    out = Prepared(path=path, overrides=overrides)
    try:
        out.config = load_config(path)
        out.required = required_secrets(out.config.flow, target)
        out.secrets = sources.resolve(target, config_path=path)
        out.secrets.require(out.required)
        out.plan = plan_for(out.config, overrides, out.secrets)
        bundled = _bundled_task_app_url(out, target)
        if bundled is not None:
            out.plan = plan_for(out.config, overrides.model_copy(update={"task_url": bundled}), out.secrets)
            out.plan.warnings[:] = [w for w in out.plan.warnings if not w.startswith(f"--task-url {bundled} ")]
    except SynthNbError as exc:
        out.error = exc
    return out


def bundled_app_name(config: LoadedConfig) -> str | None:
    """The bundled example task app a config is written for, by the task it names (not by its URL).

    Prompt learning names it in ``[prompt_learning].task_app_id`` (or the algorithm's ``env_name``), RL
    in ``[rollout].env_name``.
    """
    from synth_nb.local.examples import TASK_APPS

    raw = config.raw
    if config.flow == "prompt_learning":
        section = raw.get("prompt_learning") or {}
        names = [section.get("task_app_id"), *((section.get(a) or {}).get("env_name") for a in ("gepa", "mipro"))]
    else:
        names = [(raw.get("rollout") or {}).get("env_name")]
    return next((n for n in names if isinstance(n, str) and n in TASK_APPS), None)


def _bundled_task_app_url(item: Prepared, target: Target) -> str | None:
    """On the embedded backend, the bundled copy of a config's task app when its own URL does not answer.

    The bundled example configs name a task app on 127.0.0.1:8102 for one run by hand; the embedded
    backend serves the same app itself, so the example runs as it is. A URL given with ``--task-url`` or
    ``TASK_APP_URL`` is the user's choice and is never replaced; neither is a task app that answers (even
    with an error), nor one of a task the embedded backend does not bundle.
    """
    from synth_nb.local.examples import task_app_path

    if not (target.is_embedded and target.started) or item.config is None or item.overrides is None:
        return None
    if item.overrides.task_url is not None:
        return None
    name = bundled_app_name(item.config)
    app = task_app_for(item)
    if name is None or app is None or app.url != _written_task_url(item.config):
        return None
    if check_task_app(app).status is not None:
        return None
    url = target.url.removesuffix("/api") + task_app_path(name)
    if app.url.rstrip("/") == url:
        return None
    print(f"task app {app.url} does not answer: using the embedded backend's bundled {name!r} task app at {url}",
          flush=True)
    return url


def _written_task_url(config: LoadedConfig) -> str | None:
    raw = config.raw
    if config.flow == "prompt_learning":
        return (raw.get("prompt_learning") or {}).get("task_app_url")
    return (raw.get("services") or {}).get("task_url")


def required_secrets(flow: str, target: Target) -> tuple[str, ...]:
    """The flow's required secrets; the embedded backend brings its own SYNTH_API_KEY."""
    from synth_nb.flows import get_flow

    keys = tuple(get_flow(flow).required_secrets)
    return tuple(k for k in keys if k != SYNTH_API_KEY) if target.is_embedded else keys


def check_together(overrides: Overrides, prepared: Sequence[Prepared]) -> None:
    """Overrides several jobs cannot share (one ``--idempotency`` key) raise ``OverrideError``."""
    from synth_nb.flows.overrides import check_multi_config

    flows = [p.config.flow for p in prepared if p.config is not None]
    if len(flows) > 1:
        check_multi_config(overrides, flows)


def raise_problems(prepared: Sequence[Prepared]) -> None:
    """Raise the one problem, or a ``ConfigError`` listing every config's problem (all are usage errors)."""
    errors = [p.error for p in prepared if p.error is not None]
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ConfigError(f"{len(errors)} of {len(prepared)} configs have problems:\n"
                          + "\n".join(f"* {e}" for e in errors))
