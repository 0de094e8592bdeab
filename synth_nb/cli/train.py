"""``synth-nb train``: validate configs, resolve secrets, build plans; preview them or submit them.

``--dry-run`` prints, per config, the flow, algorithm, backend, where each secret came from (masked),
warnings and every step with its full JSON body (secrets masked), then exits 0. ``--dry-run --json`` prints
the public plan document ``{"flow", "algorithm", "steps": [{"method", "path", "body"}]}`` for one config,
or a JSON list of such documents when several ``--config`` are given; warnings then go to stderr.

Without ``--config``, training TOMLs under the working directory are discovered: exactly one is used;
several are listed and the command exits 2 asking for ``--config``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.cli.args import add_train_arguments
from synth_nb.errors import ConfigError, SecretsError, SynthNbError
from synth_nb.plan import Plan, mask_payload

__all__ = ["PreparedJob", "configure", "discover_single_config", "prepare", "render_plan", "run"]

_BACKEND_LOCAL = "local"


@dataclass
class PreparedJob:
    """One config turned into a plan, with the secrets it resolved."""

    plan: Plan
    secrets: Any  # synth_nb.secrets.SecretBundle


def configure(parser: argparse.ArgumentParser) -> None:
    add_train_arguments(parser)


def discover_single_config(folder: Path) -> Path:
    """The one training config under ``folder``; otherwise ``ConfigError`` listing the candidates."""
    from synth_nb.config import discover_configs

    found = [c for c in discover_configs(folder) if c.is_training_config]
    if len(found) == 1:
        print(f"using {found[0].path} ({found[0].flow})", file=sys.stderr)
        return found[0].path
    if not found:
        raise ConfigError(f"no training config found under {folder}",
                          hint="pass --config PATH to a TOML with [algorithm] or [prompt_learning]")
    lines = []
    for cand in found:
        kind = f"{cand.flow}" + (f"/{cand.algorithm}" if cand.algorithm else "")
        state = "valid" if cand.valid else f"invalid: {(cand.error or '').splitlines()[0][:120]}"
        lines.append(f"  [{kind}] {cand.path}  ({state})")
    raise ConfigError(f"{len(found)} training configs found under {folder}; choose one with --config PATH:\n"
                      + "\n".join(lines))


def _overrides(args: argparse.Namespace) -> Any:
    from synth_nb.flows.overrides import Overrides

    return Overrides.from_args(args)


def prepare(args: argparse.Namespace, config_paths: list[Path], overrides: Any, *,
            local_backend: bool = False) -> list[PreparedJob]:
    """Load every config, resolve its secrets and build its plan; all problems are reported together.

    ``local_backend``: the embedded backend supplies the API key, so SYNTH_API_KEY is not required.
    """
    from synth_nb.config import load_config
    from synth_nb.flows import plan_for
    from synth_nb.flows.overrides import check_multi_config
    from synth_nb.secrets import resolve_secrets

    jobs: list[PreparedJob] = []
    errors: list[SynthNbError] = []
    for path in config_paths:
        try:
            config = load_config(path)
            secrets = resolve_secrets(config.flow, config_path=config.path, env_files=args.env_files or (),
                                      modal_secrets=args.modal_secrets or (),
                                      local_backend=local_backend).require()
            jobs.append(PreparedJob(plan_for(config, overrides, secrets), secrets))
        except SynthNbError as exc:
            errors.append(exc)
    if errors:
        if len(errors) == 1:
            raise errors[0]
        code = max(e.exit_code for e in errors)
        err = ConfigError(f"{len(errors)} of {len(config_paths)} configs have problems:\n"
                          + "\n".join(f"* {e}" for e in errors))
        err.exit_code = code
        raise err
    check_multi_config(overrides, [job.plan.flow for job in jobs])
    return jobs


def _pretty(value: Any, indent: int = 0) -> str:
    """Indented JSON, but lists of plain values (seed lists...) stay on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        flat = json.dumps(value, ensure_ascii=False)
        if all(not isinstance(v, dict | list) for v in value) and (
                all(isinstance(v, int | float) for v in value) or len(flat) <= 100):
            return flat
        return "[\n" + ",\n".join(f"{inner}{_pretty(v, indent + 2)}" for v in value) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


def render_plan(job: PreparedJob) -> str:
    """The human-readable, masked preview of one plan."""
    plan = job.plan
    secret_values = [s.get_secret_value() for s in plan.secrets]
    algo = f" ({plan.algorithm})" if plan.algorithm else ""
    backend = plan.backend_url
    if backend == _BACKEND_LOCAL:
        backend += " (the embedded backend is started on submission and its URL replaces 'local')"
    out = [f"== {plan.config_path}", f"flow:      {plan.flow}{algo}", f"backend:   {backend}"]
    for name, info in job.secrets.as_masked_dict().items():
        out.append(f"secret:    {name} = {info['masked']}  (from {info['source']})")
    for name, setting in job.secrets.settings.items():
        out.append(f"setting:   {name} = {setting.value}  (from {setting.source})")
    if plan.warnings:
        out.append("warnings:")
        out.extend(f"  - {w}" for w in plan.warnings)
    for number, step in enumerate(plan.steps, start=1):
        out.append("")
        out.append(f"step {number}/{len(plan.steps)}: {step.method} {step.path}  [{step.kind}]")
        if step.description:
            out.append(f"  {step.description}")
        if step.upload is not None:
            out.append(f"  file: {step.upload}")
        for header, value in step.headers.items():
            out.append(f"  header {header}: {value}")
        out.append(_pretty(mask_payload(step.body, secret_values)))
    return "\n".join(out)


def _print_dry_run(jobs: list[PreparedJob], as_json: bool) -> None:
    if as_json:
        docs = [job.plan.preview() for job in jobs]
        for job in jobs:
            for warning in job.plan.warnings:
                print(f"warning: {job.plan.config_path}: {warning}", file=sys.stderr)
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False))
        return
    print("\n\n".join(render_plan(job) for job in jobs))
    print(f"\ndry run: {len(jobs)} valid plan(s), nothing was sent")


def _submit(args: argparse.Namespace, jobs: list[PreparedJob], backend_url: str, api_key: str) -> int:
    try:
        from synth_nb.cli._stream import run_plans
    except ImportError as exc:
        print(f"error: job submission is not available in this installation ({exc})", file=sys.stderr)
        return 1
    return int(run_plans([job.plan for job in jobs], args, backend_url, api_key))


def _api_key(jobs: list[PreparedJob]) -> str:
    keys = {job.secrets.secret_value("SYNTH_API_KEY") for job in jobs}
    if len(keys) > 1:
        raise SecretsError("the configs resolve different SYNTH_API_KEY values (different .env files); "
                           "submit them one at a time")
    key = keys.pop() if keys else None
    if not key:
        raise SecretsError("missing required key SYNTH_API_KEY")
    return key


def run(args: argparse.Namespace) -> int:
    overrides = _overrides(args)
    if args.json_output and not args.dry_run:
        raise ConfigError("--json only applies to --dry-run (add --dry-run)")
    if args.attach or args.list_jobs:
        from synth_nb.backend_target import resolve_backend
        from synth_nb.secrets import resolve_secrets

        bundle = resolve_secrets("sft", env_files=args.env_files or (), modal_secrets=args.modal_secrets or ())
        backend = overrides.backend if overrides.backend == _BACKEND_LOCAL else resolve_backend(overrides.backend)
        return _submit(args, [], backend, bundle.secret_value("SYNTH_API_KEY") or "")
    paths = [Path(p) for p in args.configs] if args.configs else [discover_single_config(Path.cwd())]
    if overrides.backend == _BACKEND_LOCAL and not args.dry_run:
        return _run_local(args, paths, overrides)
    jobs = prepare(args, paths, overrides, local_backend=overrides.backend == _BACKEND_LOCAL)
    if args.dry_run:
        _print_dry_run(jobs, args.json_output)
        return 0
    return _submit(args, jobs, jobs[0].plan.backend_url, _api_key(jobs))


def _run_local(args: argparse.Namespace, paths: list[Path], overrides: Any) -> int:
    """``--backend local``: start the embedded backend, plan against its URL, submit, stop it."""
    try:
        from synth_nb.local import start_backend
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigError(f"--backend local needs the 'local' extra (pip install 'synth-nb[local]'): {exc}") from None
    backend = start_backend(port=0)
    try:
        local = overrides.model_copy(update={"backend": backend.url})
        jobs = prepare(args, paths, local, local_backend=True)
        return _submit(args, jobs, jobs[0].plan.backend_url, backend.api_key)
    finally:
        backend.stop()
