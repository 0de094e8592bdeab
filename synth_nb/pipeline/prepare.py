"""From TOML files to plans: discover the configs, load one, resolve its secrets, build its plan.

Every stage keeps what it found in a ``Prepared`` and the first failure stops that config only, so the
CLI can report every broken config at once and the wizard can show each one's secrets and errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from synth_nb.config import discover_configs, load_config
from synth_nb.errors import ConfigError, OverrideError, SynthNbError
from synth_nb.flows import all_flows, get_flow, override_rows, plan_for
from synth_nb.flows.override_rows import CORE_ROWS
from synth_nb.flows.overrides import Overrides, check_multi_config
from synth_nb.pipeline import bundled_apps
from synth_nb.pipeline.preflight import check_task_app, task_app_for
from synth_nb.pipeline.target import Target, api_key
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, SecretBundle, resolve_secrets

if TYPE_CHECKING:
    from synth_nb.config import DiscoveredConfig, LoadedConfig
    from synth_nb.plan import Plan

#: where an action says what is worth knowing on the way (the door's: a notebook cell, the terminal's stderr)
Say = Callable[[str], None]

__all__ = [
    "Prepared",
    "Say",
    "SecretSources",
    "build_overrides",
    "check_applies",
    "check_together",
    "choose_configs",
    "discover",
    "limit_rollouts",
    "prepare_config",
    "raise_problems",
    "required_secrets",
]


def discover(folder: Path) -> list[DiscoveredConfig]:
    """Training configs under ``folder``, plus TOML files that do not parse (maybe broken training configs).

    TOML files that parse but are not training configs (``pyproject.toml``) are left out.
    """
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
    data = {k: v for k, v in values.items() if v is not None and k != "backend"}
    return Overrides.build(override_rows(), **data, backend=target.url)


def limit_rollouts(items: Sequence[Prepared], limit: int | None, *, followed: bool = True) -> None:
    """Write ``--max-rollouts`` into each plan's job body where its flow has a field for it, so the backend stops
    at the limit itself; a plan the limit cannot apply to gets the error (``ConfigError``) instead. Not
    ``followed`` (``--no-poll``), a flow with no such field would get no limit at all (its watchdog follows
    nothing): that plan gets the error too."""
    if limit is None:
        return
    for item in items:
        if item.plan is None or item.error is not None:
            continue
        try:
            limited = get_flow(item.plan.flow).with_rollout_limit(item.plan, limit)
        except ConfigError as exc:
            item.error = exc
            continue
        if limited is item.plan and not followed:
            item.error = ConfigError(f"--max-rollouts is a watchdog limit for {get_flow(item.plan.flow).label} jobs "
                                     "(their request has no rollout cap), and --no-poll follows nothing: drop "
                                     "--no-poll", key="max-rollouts")
        item.plan = limited


def check_applies(overrides: Mapping[str, Any], items: Sequence[Prepared]) -> None:
    """A flow's own override (``--rollout-budget``, ``--iterations``…) that none of the configs' flows honours
    would change nothing: an ``OverrideError`` (exit 2) naming it and what it applies to. (An override every
    flow is asked about, which synth-ai 0.2.24 accepted and ignored, stays one warning in the plan.)"""
    flows = [get_flow(item.config.flow) for item in items if item.config is not None]
    if not flows:
        return
    core = {row.name for row in CORE_ROWS}
    for name in overrides:
        if name in core or name == "backend" or any(flow.honours(name) for flow in flows):
            continue
        row = next((r for r in override_rows() if r.name == name), None)
        owners = [f.label for f in all_flows() if f.honours(name)]
        names = ", ".join(f"{item.path.name} ({item.config.flow})" for item in items if item.config is not None)
        raise OverrideError(f"{row.flag if row else '--' + name} applies to {' and '.join(owners) or 'no'} "
                            f"configs only, and changes nothing in {names}: drop it", field=name)


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
    #: the task app the plan names in place of the config's own, which does not answer: (URL, in words)
    stand_in: tuple[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.plan is not None

    @property
    def missing(self) -> list[str]:
        return self.secrets.missing(self.required) if self.secrets is not None else list(self.required)


def prepare_config(path: Path, *, overrides: Overrides, target: Target, sources: SecretSources, say: Say = print,
                   config: LoadedConfig | None = None) -> Prepared:
    """Load (unless ``config`` is the config at ``path``, loaded already), resolve secrets and build the plan
    for one config; never raises a ``SynthNbError``. ``say`` gets what is worth knowing on the way (a bundled
    task app standing in for the config's own)."""
    out = Prepared(path=path, overrides=overrides)
    try:
        out.config = config if config is not None else load_config(path)
        out.required = required_secrets(out.config.flow, target)
        out.secrets = sources.resolve(target, config_path=path)
        out.secrets.require(out.required)
        out.plan = plan_for(out.config, overrides, out.secrets)
        bundled = _stand_in(out, target, say)
        if bundled is not None:
            out.plan = plan_for(out.config, overrides.model_copy(update={"task_url": bundled[0]}), out.secrets)
            out.plan.warnings[:] = [w for w in out.plan.warnings if not w.startswith(f"--task-url {bundled[0]} ")]
            out.stand_in = bundled
    except SynthNbError as exc:
        out.error = exc
    return out


def _stand_in(item: Prepared, target: Target, say: Say) -> tuple[str, str] | None:
    """On the embedded backend, the bundled copy of a config's task app when its own URL does not answer.

    The bundled example configs name a task app on 127.0.0.1:8102 for one run by hand; the embedded
    backend serves the same app itself, so the example runs as it is (``say`` gets the line saying so). A URL
    given with ``--task-url`` or ``TASK_APP_URL`` is the user's choice and is never replaced; neither is a task
    app that answers (even with an error), nor one of a task the embedded backend does not bundle.
    """
    if not (target.is_embedded and target.started) or item.config is None or item.overrides is None:
        return None
    if item.overrides.task_url is not None:
        return None
    ref = get_flow(item.config.flow).task_app_ref(item.config)
    name = bundled_apps.named_by(item.config)
    app = task_app_for(item)
    if name is None or ref is None or app is None or app.url != ref.url:
        return None
    if check_task_app(app).status is not None:
        return None
    url = bundled_apps.served_at(name, target.url)
    if app.url.rstrip("/") == url:
        return None
    say(f"task app {app.url} does not answer: using the embedded backend's bundled {name!r} task app at {url}")
    return url, f"the bundled {name} app on the embedded backend (the config's {app.url} does not answer)"


def required_secrets(flow: str, target: Target) -> tuple[str, ...]:
    """The flow's required secrets; the embedded backend brings its own SYNTH_API_KEY."""
    keys = tuple(get_flow(flow).required_secrets)
    return tuple(k for k in keys if k != SYNTH_API_KEY) if target.is_embedded else keys


def check_together(overrides: Overrides, prepared: Sequence[Prepared]) -> None:
    """Overrides several jobs cannot share (one ``--idempotency`` key) raise ``OverrideError``."""
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
