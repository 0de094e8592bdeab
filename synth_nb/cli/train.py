"""``synth-nb train``: validate configs, resolve secrets, build plans; preview them or submit them.

``--dry-run`` prints, per config, the flow, algorithm, backend, where each secret came from (masked),
warnings and every step with its full JSON body (secrets masked), then exits 0. ``--dry-run --json`` prints
the public plan document ``{"flow", "algorithm", "steps": [{"method", "path", "body"}]}`` for one config,
or a JSON list of such documents when several ``--config`` are given; warnings then go to stderr.

Without ``--config``, training TOMLs under the working directory are discovered: exactly one valid one is
used; with several, a terminal gets a picker (several may be ticked) and anything else (CI, pipes) gets
every candidate listed and exit 2 asking for ``--config``. Likewise several ``.env`` files and no
``--env-file`` bring up a picker on a terminal. Before a job whose flow names a task app is created, the
task app's ``/health`` is checked from here (``SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1`` skips it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from synth_nb import pipeline
from synth_nb.backend import LOCAL, display_url
from synth_nb.cli.args import OVERRIDE_FLAGS, add_train_arguments
from synth_nb.errors import ConfigError
from synth_nb.pipeline import Prepared, SecretSources, Target
from synth_nb.plan import mask_payload

__all__ = ["configure", "config_paths", "prepare", "render_plan", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_train_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.json_output and not (args.dry_run or args.check):
        raise ConfigError("--json only applies to --dry-run (add --dry-run)")
    from synth_nb.job.watchdog import Limits

    Limits.from_values(vars(args))  # a bad limit fails before anything runs
    if args.list_jobs:
        from synth_nb.cli.jobs import print_jobs
        from synth_nb.job import JobRegistry

        return print_jobs(JobRegistry(Path.cwd()))
    if args.attach:
        from synth_nb.cli.attach import follow_job

        return follow_job(args.attach, args)
    if args.compare is not None:
        from synth_nb.comparison import compare

        print(compare(args.compare or None, backend=args.backend, env_files=args.env_files or ()).to_text(), end="")
        return 0
    if args.check:
        return _check(args)
    if args.rerun:
        return _rerun(args)
    if args.fork:
        return _fork(args)
    preview = pipeline.resolve_target(args.backend, start_local=False)
    overrides = pipeline.build_overrides(_override_values(args), preview)  # bad flags fail before anything runs
    paths = config_paths(args)
    if args.dry_run:
        _print_dry_run(prepare(args, paths, overrides, preview), args.json_output)
        return 0
    return _submit(args, paths)


def _override_values(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name, None) for name in OVERRIDE_FLAGS}


def config_paths(args: argparse.Namespace) -> list[Path]:
    """``--config`` paths, else the one valid training config under the working directory (or the picker's)."""
    from synth_nb.cli.pickers import is_interactive, pick_configs

    if args.configs:
        from synth_nb.config import config_path

        return [config_path(p) for p in args.configs]
    folder = Path.cwd()
    try:
        (found,) = pipeline.choose_configs(folder, several=False)
    except ConfigError:
        candidates = pipeline.discover(folder)
        if not is_interactive() or not any(c.valid for c in candidates):
            raise
        return pick_configs(candidates, folder)
    print(f"using {found.path} ({found.flow})", file=sys.stderr)
    return [found.path]


def env_files(args: argparse.Namespace, paths: list[Path], target: Target) -> tuple[Path, ...]:
    """``--env-file`` paths; else, on a terminal with several candidate ``.env`` files, the one picked."""
    from synth_nb.cli.pickers import env_file_candidates, is_interactive, pick_env_file

    if args.env_files:
        return tuple(Path(p) for p in args.env_files)
    if not is_interactive():
        return ()
    candidates = env_file_candidates([p.parent for p in paths], Path.cwd())
    if len(candidates) < 2:
        return ()
    return (pick_env_file(candidates, _required_keys(paths, target), Path.cwd()),)


def _required_keys(paths: list[Path], target: Target) -> list[str]:
    """The secrets the configs' flows need (configs that do not load yet count as needing none)."""
    from synth_nb.config import load_config

    keys: list[str] = []
    for path in paths:
        try:
            flow = load_config(path).flow
        except ConfigError:
            continue
        keys += [k for k in pipeline.required_secrets(flow, target) if k not in keys]
    return keys


def prepare(args: argparse.Namespace, paths: list[Path], overrides: Any, target: Target) -> list[Prepared]:
    """Every config turned into a plan; all problems are reported together (``ConfigError``)."""
    sources = SecretSources(env_files=env_files(args, paths, target),
                            modal_secrets=tuple(args.modal_secrets or ()))
    prepared = [pipeline.prepare(path, overrides=overrides, target=target, sources=sources) for path in paths]
    pipeline.raise_problems(prepared)
    pipeline.check_together(overrides, prepared)
    return prepared


def _submit(args: argparse.Namespace, paths: list[Path]) -> int:
    """Start (or find) the target, plan against it, submit and follow.

    The embedded backend of ``local`` keeps running afterwards, for ``attach`` and other commands.
    """
    from synth_nb.cli.follow import FollowOptions, run_submit

    target = pipeline.resolve_target(args.backend)
    prepared = prepare(args, paths, pipeline.build_overrides(_override_values(args), target), target)
    key = pipeline.api_key(target, [p.secrets for p in prepared])
    plans = [p.plan for p in prepared if p.plan is not None]
    pipeline.share_keys(target, [p.secrets for p in prepared])
    for check in pipeline.preflight(prepared, target):
        print(check.line(), file=sys.stderr)
    runs = [pipeline.record_run(p, base=Path.cwd(), secrets=[key], embedded=target.is_embedded)
            for p in prepared if p.plan is not None]
    return run_submit(plans, target, key, FollowOptions.from_args(args), runs=runs)


def _check(args: argparse.Namespace) -> int:
    """``--check``: the pre-flight card of every config (exit 2 when one is not ready); no job is sent.

    The dry rollout needs a running backend, so ``local`` starts (or finds) the embedded one.
    """
    from synth_nb.pipeline.card import cards_json, check_configs
    from synth_nb.secrets import mask_text

    target = pipeline.resolve_target(args.backend)
    paths = config_paths(args)
    overrides = pipeline.build_overrides(_override_values(args), target)
    sources = SecretSources(env_files=env_files(args, paths, target), modal_secrets=tuple(args.modal_secrets or ()))
    prepared = [pipeline.prepare(path, overrides=overrides, target=target, sources=sources) for path in paths]
    cards, hidden = check_configs(prepared, target)
    text = cards_json(cards) if args.json_output else "\n\n".join("\n".join(c.lines()) for c in cards)
    print(mask_text(text, tuple(hidden)))
    return 0 if all(card.ok for card in cards) else 2


def _rerun(args: argparse.Namespace) -> int:
    """``--rerun JOB_ID``: submit the job's plan again from its bundle, after showing the diff is empty.

    Any difference (the config or a dataset changed, the plan would differ) is shown and exits 2 with
    nothing sent. The backend is ``--backend``, else the one the job ran on.
    """
    from synth_nb.cli.follow import FollowOptions, run_submit
    from synth_nb.pipeline.rerun import parent_backend, plan_rerun
    from synth_nb.secrets import mask_text

    given = [f"--{name.replace('_', '-')}" for name, value in _override_values(args).items() if value is not None]
    if args.configs or given:
        raise ConfigError(f"--rerun repeats the job's own config and overrides; drop {', '.join(given or ['--config'])}"
                          " (or submit a new job without --rerun)")
    folder = Path.cwd()
    target = pipeline.resolve_target(args.backend or parent_backend(args.rerun, folder))
    sources = SecretSources(env_files=tuple(Path(p) for p in args.env_files or ()),
                            modal_secrets=tuple(args.modal_secrets or ()))
    rerun = plan_rerun(args.rerun, folder, target, sources)
    plan = rerun.prepared.plan
    assert plan is not None
    key = pipeline.api_key(target, [rerun.prepared.secrets])
    text = mask_text("\n".join(rerun.lines()), tuple(pipeline.secret_values(key, [plan])))
    if not rerun.same:
        print(text, file=sys.stderr)
        return 2
    print(text, file=sys.stderr)
    pipeline.share_keys(target, [rerun.prepared.secrets])
    for check in pipeline.preflight([rerun.prepared], target):
        print(check.line(), file=sys.stderr)
    run = pipeline.record_run(rerun.prepared, base=folder, secrets=[key], embedded=target.is_embedded,
                              parent=args.rerun)
    return run_submit([plan], target, key, FollowOptions.from_args(args), runs=[run])


def _fork(args: argparse.Namespace) -> int:
    """``--fork JOB_ID``: the job's config as submitted, written to a new TOML to edit, and the command to submit it.

    Sends nothing. ``--out PATH`` names the file (default: beside the job's config).
    """
    from synth_nb.pipeline.fork import fork_job

    if args.configs:
        raise ConfigError("--fork starts from the job's own config; drop --config")
    folder = Path.cwd()
    fork = fork_job(args.fork, folder, out=Path(args.fork_out) if args.fork_out else None, copy=True)
    given = {k: v for k, v in _override_values(args).items() if v is not None}
    fork.overrides.update(given)
    if args.backend:
        fork.backend = args.backend
    print("\n".join(fork.lines(folder)))
    return 0


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


def render_plan(job: Prepared) -> str:
    """The human-readable, masked preview of one prepared config."""
    plan, secrets = job.plan, job.secrets
    assert plan is not None and secrets is not None  # prepare() raised for every config without a plan
    secret_values = [s.get_secret_value() for s in plan.secrets]
    algo = f" ({plan.algorithm})" if plan.algorithm else ""
    backend = display_url(plan.backend_url)
    if backend == LOCAL:
        backend += " (the embedded backend is started on submission and its URL replaces 'local')"
    out = [f"== {plan.config_path}", f"flow:      {plan.flow}{algo}", f"backend:   {backend}"]
    for name, info in secrets.as_masked_dict().items():
        out.append(f"secret:    {name} = {info['masked']}  (from {info['source']})")
    for name, setting in secrets.settings.items():
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
            out.append(f"  header {header}: {mask_payload(value, secret_values)}")
        out.append(_pretty(mask_payload(step.body, secret_values)))
    return "\n".join(out)


def _print_dry_run(jobs: list[Prepared], as_json: bool) -> None:
    plans = [job.plan for job in jobs if job.plan is not None]
    if as_json:
        for plan in plans:
            for warning in plan.warnings:
                print(f"warning: {plan.config_path}: {warning}", file=sys.stderr)
        docs = [plan.preview() for plan in plans]
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False, allow_nan=False))
        return
    print("\n\n".join(render_plan(job) for job in jobs))
    print(f"\ndry run: {len(jobs)} valid plan(s), nothing was sent")
