"""``%synth_train`` / ``%%synth_train``: the notebook face of ``synth-nb train``.

The flags are the CLI's own (``synth_nb.pipeline.flags.TRAIN_ARGUMENTS``) applied through IPython's
``magic_arguments``, so ``%synth_train?`` prints the same help as ``synth-nb train --help``. The flags
become one ``synth_nb.pipeline.request.Request``, whose ``action`` says what to do; the magic only renders
it: the wizard when a widget front end is present and ``--yes`` is absent, otherwise a masked text preview,
and submission through ``synth_nb.notebook.launch`` when ``--yes`` is given.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from synth_nb.errors import SynthNbError
from synth_nb.notebook import job_table, launch
from synth_nb.notebook._frontend import has_widget_frontend
from synth_nb.notebook.cell_value import install as install_cell_values
from synth_nb.notebook.cell_value import shown
from synth_nb.notebook.folder import notebook_folder
from synth_nb.notebook.kernel_loop import run_sync
from synth_nb.notebook.live_output import install_shutdown_hook
from synth_nb.pipeline import actions, stop_local_backend
from synth_nb.pipeline.flags import add_train_arguments, train_arguments
from synth_nb.pipeline.preview import preview_text
from synth_nb.pipeline.request import Request

__all__ = ["SynthMagics", "load_ipython_extension", "unload_ipython_extension"]

CELL_CONFIG_PREFIX = ".synth_train_cell_"


HELP_INTRO = """\
%synth_train: validate, preview and submit Synth training jobs (RL, SFT, prompt learning), then watch them.

Examples:
  %synth_train                                    open the wizard: config, secrets, overrides, preview, submit
  %synth_train --config configs/gepa.toml --yes   submit without the wizard and show a live panel
  %synth_train -c configs/sft.toml --dry-run      print exactly what would be sent; send nothing
  %synth_train -c configs/rl.toml --backend local --yes --wait
                                                  run on the embedded local backend; block until the end
  %synth_train --attach pl_1a2b3c                 show a job again (after a kernel restart)
  %synth_train --fork pl_1a2b3c                   the wizard prefilled from a finished job, diffed against it
  %synth_train --jobs                             list the jobs started from this folder
  %%synth_train --backend local --yes             (cell magic) the TOML config is the cell's body

Returns the created Job (a list for several configs): `await job.wait()`, `job.metrics_df()`. What the cell
shows already (the panel, the preview, the cards) is not shown again as its value.
"""


def _plain_help(generated: str) -> str:
    """IPython's generated help without its reStructuredText: no leading ``::`` block, no double backticks."""
    text = generated.removeprefix("::\n\n")
    lines = text.splitlines()
    usage_end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    usage = [line[2:] if line.startswith("  ") else line for line in lines[:usage_end]]
    rest = ["Options:" if line == "options:" else line for line in lines[usage_end:]]
    body = "\n".join(["Usage:", *("  " + line for line in usage), *rest])
    return body.replace("``", "`")


def _with_train_arguments(func: Any) -> Any:
    """Apply the shared train flags as ``magic_arguments``, then write the help a user reads with
    ``%synth_train?``: what it does, examples, usage and every flag."""
    for spec in reversed(train_arguments()):
        func = magic_arguments.argument(*spec.flags, **spec.kwargs)(func)
    func = magic_arguments.magic_arguments()(func)
    func.__doc__ = HELP_INTRO + "\n" + _plain_help(func.__doc__ or "")
    return func


def _parser() -> magic_arguments.MagicArgumentParser:
    """The train flags as they are now (a flow registered since the extension loaded brings its own)."""
    parser = magic_arguments.MagicArgumentParser(prog="%synth_train", add_help=False)
    add_train_arguments(parser)
    return parser


def write_cell_config(folder: Path, text: str) -> Path:
    """Write a ``%%synth_train`` body next to the notebook (one file per distinct body, reused)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = folder / f"{CELL_CONFIG_PREFIX}{digest}.toml"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


@magics_class
class SynthMagics(Magics):
    """Holds the ``synth_train`` magic; one instance per shell."""

    @_with_train_arguments
    @line_cell_magic
    def synth_train(self, line: str, cell: str | None = None) -> Any:
        """With no --config and a widget front end, opens the wizard; headless, prints a masked preview
        and submits only with --yes."""
        args = _parser().parse_argstring(line)
        folder = notebook_folder(self.shell.user_ns if self.shell else None)
        if cell is not None and cell.strip():
            args.configs = [*(args.configs or []), str(write_cell_config(folder, cell))]
        try:
            request = Request.from_args(args, folder)
            for note in request.ignored:  # flags synth-ai 0.2.24 accepted and ignored: said, not refused
                print(f"warning: {note}")
            return DOOR[request.action](self, request)
        except SynthNbError as exc:
            raise UsageError(str(exc)) from None

    @property
    def widgets(self) -> bool:
        return has_widget_frontend(self.shell)

    def _jobs(self, request: Request) -> Any:
        return job_table.JobTable(run_sync(actions.jobs(request)))

    def _attach(self, request: Request) -> Any:
        return shown(launch.attach_job(request, widgets=self.widgets))

    def _compare(self, request: Request) -> Any:
        from synth_nb.comparison import compare_request

        return compare_request(request)

    def _check(self, request: Request) -> Any:
        return shown(launch.show_cards(request))

    def _rerun(self, request: Request) -> Any:
        return shown(launch.rerun_job(request, widgets=self.widgets))

    def _fork(self, request: Request) -> Any:
        fork = launch.fork_of(request)
        if not self.widgets or request.dry_run:  # no wizard to open: where the config is, and how to submit it
            print("\n".join(fork.lines(request.folder, prog="%synth_train")))
            return shown(fork)
        if fork.written or fork.notes:  # a new file the wizard opens on, or what changed: say which, and why
            print("\n".join(fork.summary(request.folder)))
        from synth_nb.notebook.wizard import open_wizard

        return _displayed(open_wizard(request, fork=fork))

    def _prepare(self, request: Request) -> Any:
        """``--dry-run``: the masked text preview (or the plan documents with ``--json``); sends nothing.

        Returns the plans made (None when no config made one: the preview says why)."""
        batch = actions.prepare(request, several=True)
        prepared = batch.prepared
        if request.json_output:
            print(json.dumps([p.plan.preview() if p.plan is not None else {"config": str(p.path), "error": str(p.error)}
                              for p in prepared], indent=2, ensure_ascii=False))
        else:
            print(preview_text(prepared, backend_url=batch.target.url))
        plans = [p.plan for p in prepared if p.plan is not None]
        return shown(plans) if plans else None

    def _submit(self, request: Request) -> Any:
        widgets = self.widgets
        if widgets and not request.yes:
            from synth_nb.notebook.wizard import open_wizard

            if request.wait:  # a flag the wizard cannot honour is said, not dropped
                print("--wait blocks the cell that submits, and the wizard submits after this cell has ended: "
                      "its jobs are followed live below it. To wait, `await job.wait()` for a job of "
                      "`wizard.jobs` in a later cell (wizard = what this cell returns), or add --yes to "
                      "submit from this cell and wait here.")
            return _displayed(open_wizard(request))
        batch = actions.prepare(request, several=not request.yes)
        if not request.yes:
            print(preview_text(batch.prepared, backend_url=batch.target.url))
            print("Nothing was sent. Run again with --yes to submit.")
            return None
        if batch.failed:  # the UsageError alone says it (file, table.key, line): printing it too said it twice
            batch.raise_problems()
        jobs = launch.submit_and_show(batch, request, widgets=widgets)
        return shown(jobs[0] if len(jobs) == 1 else jobs)


def _displayed(wizard: Any) -> Any:
    """The wizard shown by the magic itself, so ``w = %synth_train`` (an assignment IPython shows nothing of)
    opens it too; returned as shown, so ``%synth_train`` alone does not show it twice."""
    from IPython.display import display

    display(wizard)
    return shown(wizard)


#: ``Request.action`` -> what the magic does with it
DOOR: dict[str, Callable[[SynthMagics, Request], Any]] = {
    "jobs": SynthMagics._jobs, "attach": SynthMagics._attach, "compare": SynthMagics._compare,
    "check": SynthMagics._check, "rerun": SynthMagics._rerun, "fork": SynthMagics._fork,
    "prepare": SynthMagics._prepare, "submit": SynthMagics._submit,
}


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext synth_nb``: register ``%synth_train`` / ``%%synth_train``."""
    ipython.register_magics(SynthMagics)
    install_shutdown_hook(ipython)  # the kernel's widgets leave static snapshots when it stops
    install_cell_values(ipython)  # what a cell showed is not shown again as its value


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext synth_nb``: remove the magics and stop this kernel's embedded local backend."""
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("synth_train", None)
    registry = ipython.magics_manager.registry
    registry.pop("SynthMagics", None)
    stop_local_backend()
