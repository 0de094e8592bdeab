"""``synth-nb train``: validate configs, resolve secrets, build plans; preview them or submit them.

``--dry-run`` prints, per config, the flow, algorithm, backend, where each secret came from (masked),
warnings and every step with its full JSON body (secrets masked), then exits 0. ``--dry-run --json`` prints
the public plan document ``{"flow", "algorithm", "steps": [{"method", "path", "body"}]}`` for one config,
or a JSON list of such documents when several ``--config`` are given; warnings then go to stderr.

Config paths may also be given without ``--config`` (``synth-nb train configs/x.toml``, as synth-ai 0.2.24).
Without any, training TOMLs under the working directory are discovered: exactly one valid one is
used; with several, a terminal gets a picker (several may be ticked) and anything else (CI, pipes) gets
every candidate listed and exit 2 asking for ``--config``. Likewise several ``.env`` files and no
``--env-file`` bring up a picker on a terminal. Before a job whose flow names a task app is created, the
task app's ``/health`` is checked from here (``SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1`` skips it).

Before submitting (a re-run too), the one-screen masked summary (flow, model, task app, files with their sizes,
rollouts, folded seed lists, keys, "N jobs → URL"; ``--verbose``: every payload in full) is shown; on a terminal
it asks to confirm (``synth_nb.cli.confirm``; ``--yes`` skips the question), elsewhere it goes to stderr and the
submission goes on. What each flag means, and which action a
combination of them runs, is ``synth_nb.pipeline.request``'s; this module renders the results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synth_nb import pipeline
from synth_nb.backend import LOCAL, display_url
from synth_nb.cli import follow
from synth_nb.cli.follow import note
from synth_nb.errors import ConfigError
from synth_nb.pipeline import Prepared, actions
from synth_nb.pipeline.flags import add_train_arguments
from synth_nb.pipeline.request import Request
from synth_nb.plan import mask_payload
from synth_nb.untrusted import inert_lines

__all__ = ["configure", "render_plan", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_train_arguments(parser)


def run(args: argparse.Namespace) -> int:
    request = Request.from_args(args, Path.cwd(), anchor=False)
    for line in request.ignored:  # flags synth-ai 0.2.24 accepted and ignored: said, not refused
        print(f"warning: {line}", file=sys.stderr)
    return DOOR[request.action](request)


def _jobs(request: Request) -> int:
    from synth_nb.cli.jobs import print_jobs

    return print_jobs(asyncio.run(actions.jobs(request)))


def _attach(request: Request) -> int:
    from synth_nb.cli.attach import attach_and_follow

    return attach_and_follow(request)


def _compare(request: Request) -> int:
    from synth_nb.cli.compare_view import print_comparison
    from synth_nb.comparison import compare_request

    print_comparison(compare_request(request))  # a terminal gets the curves too
    return 0


def _pick_configs(folder: Path, several: bool) -> list[Path]:
    """The one valid training config under ``folder``, else the picker's choice on a terminal."""
    from synth_nb.cli.pickers import is_interactive, pick_configs

    try:
        (found,) = pipeline.choose_configs(folder, several=False)
    except ConfigError:
        candidates = pipeline.discover(folder)
        if not is_interactive() or not any(c.valid for c in candidates):
            raise
        return pick_configs(candidates, folder)
    print(f"using {found.path} ({found.flow})", file=sys.stderr)
    return [found.path]


def _pick_env_files(paths: list[Path], required: list[str]) -> tuple[Path, ...]:
    """On a terminal with several candidate ``.env`` files, the one picked (each described by the ``required``
    keys it holds; no question when the run needs no key: every row would say "no keys needed")."""
    from synth_nb.cli.pickers import env_file_candidates, is_interactive, pick_env_file

    if not is_interactive():
        return ()
    candidates = env_file_candidates([p.parent for p in paths], Path.cwd())
    if len(candidates) < 2 or not required:
        return ()
    return (pick_env_file(candidates, required, Path.cwd()),)


#: what only the terminal does: the pickers, and notes on stderr beside the preview (stdout holds only what the
#: command is asked for: a ``--json`` document, a card, the job's lines); the notebook shows them as output
HOOKS = actions.Hooks(pick_configs=_pick_configs, pick_env_files=_pick_env_files, say=note)


def _dry_run(request: Request) -> int:
    """``--dry-run``: every plan in full (masked), or the public plan documents with ``--json``; sends nothing.

    The target is resolved exactly as a submission resolves it: ``local`` finds (or starts) the embedded
    backend, so the plan shows its URL and key and, where the config's own task app does not answer, the
    bundled app the embedded backend serves, as the send would; no job is created."""
    batch = actions.prepare(request, HOOKS)
    batch.raise_problems()
    _print_dry_run(batch.prepared, request.json_output)
    return 0


def _submit(request: Request) -> int:
    """Start (or find) the target, plan against it, show the preview (a terminal confirms), submit and follow.

    The embedded backend of ``local`` keeps running afterwards, for ``attach`` and other commands.
    """
    from synth_nb.cli.confirm import declined

    batch = actions.prepare(request, HOOKS)
    batch.raise_problems()
    code = declined(batch, ask=not request.yes, verbose=request.verbose)
    return code if code is not None else follow.run_submit(batch, request)


def _check(request: Request) -> int:
    """``--check``: the pre-flight card of every config (of the re-run's plan with ``--rerun``); exit 2 when one
    is not ready. No job is sent."""
    from synth_nb.pipeline.card import cards_json
    from synth_nb.secrets import mask_text

    checked = actions.check(request, HOOKS)
    if checked.notes:
        print(mask_text("\n".join(checked.notes), tuple(checked.hidden)), file=sys.stderr)
    cards = checked.cards
    text = cards_json(cards) if request.json_output else "\n\n".join("\n".join(c.lines()) for c in cards)
    text = mask_text(inert_lines(text), tuple(checked.hidden))  # a card quotes the backend's answers
    print(_fit(text) if not request.json_output and sys.stdout.isatty() else text)
    return 0 if checked.ok else 2


def _fit(text: str) -> str:
    """The card's lines wrapped at the terminal's width between words, each continuation under its line's
    text (a terminal cut them mid-word at its edge: an estimate's basis is a long sentence); lines piped
    elsewhere stay whole, one per figure."""
    width = max(40, shutil.get_terminal_size().columns)
    out: list[str] = []
    for line in text.splitlines():
        indent = " " * (len(line) - len(line.lstrip(" ")))
        out += textwrap.wrap(line, width=width, subsequent_indent=indent + "    ", break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


def _rerun(request: Request) -> int:
    """``--rerun JOB_ID``: submit the job's plan again from its bundle, after showing the diff is empty.

    Any difference (the config or a dataset changed, the plan would differ) is shown and exits 2 with
    nothing sent. With ``--dry-run`` the diff is all there is: exit 0 when empty, 2 otherwise, nothing sent.
    Otherwise it is a submission like any other: the preview, and on a terminal ``Submit? [Y/n]``.
    """
    from synth_nb.cli.confirm import declined

    rerunning = actions.rerun(request, say=note)
    print("\n".join(rerunning.lines()), file=sys.stderr)
    if not rerunning.sendable:
        return 2
    if request.dry_run:
        print(f"dry run: the re-run of {request.rerun} was not sent", file=sys.stderr)
        return 0
    code = declined(rerunning.batch, ask=not request.yes, verbose=request.verbose)
    return code if code is not None else follow.run_submit(rerunning.batch, rerunning.request)


def _fork(request: Request) -> int:
    """``--fork JOB_ID``: the job's config as submitted, written to a new TOML to edit, and the command to submit it.

    Sends nothing. ``--out PATH`` names the file (default: beside the job's config).
    """
    fork = actions.fork(request, copy=True, say=note)
    print("\n".join(fork.lines(request.folder)))
    return 0


#: ``Request.action`` -> what the terminal does with it
DOOR: dict[str, Callable[[Request], int]] = {
    "jobs": _jobs, "attach": _attach, "compare": _compare, "check": _check, "rerun": _rerun, "fork": _fork,
    "prepare": _dry_run, "submit": _submit,
}


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
            out.append(f"  header {header}: {mask_payload(value, secret_values, shapes=True)}")
        out.append(_pretty(mask_payload(step.body, secret_values, shapes=True)))  # as plan.preview()
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
