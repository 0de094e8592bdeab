"""``synth-nb`` entry point: dispatches to one module per sub-command, importing only the one invoked.

``COMMANDS`` is the one table of sub-commands: name -> (module path, one-line help). The top-level parser
lists every name with its help from the table alone, so ``synth-nb --help`` imports no sub-command module;
only the invoked command's module is imported and configures its parser (``synth-nb jobs`` does not pay for
``train``'s imports). A new command is one line in the table and a module with ``configure`` and ``run``.

Exit codes: 0 ok, 1 job failed/cancelled/timed out, 2 usage or config error, 130 interrupted, 141 the
reader of the output went away (``synth-nb train --dry-run --json | head -1``): the code a shell reports
for a command ended by SIGPIPE, so ``set -o pipefail`` scripts see what they would see with any other tool.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn, TextIO

from synth_nb.errors import SynthNbError

__all__ = ["EXIT_OUTPUT_CLOSED", "main"]

#: 128 + SIGPIPE
EXIT_OUTPUT_CLOSED = 141
#: ``sys.argv[0]`` of this program: its console script, or ``python -m synth_nb``
PROGRAM_NAMES = ("synth-nb", "synth-nb.exe", "__main__.py")

#: sub-command -> (module, one-line help); each module has ``configure(parser)`` and ``run(args) -> int``
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("synth_nb.cli.train", "Validate, preview and submit training jobs from TOML configs."),
    "attach": ("synth_nb.cli.attach", "Re-attach to a job and stream it to the end."),
    "cancel": ("synth_nb.cli.cancel", "Ask the backend to cancel a job (Ctrl-C on attach leaves it running)."),
    "jobs": ("synth_nb.cli.jobs", "List jobs submitted from this folder."),
    "report": ("synth_nb.cli.report", "Write a job's report (or a comparison) as one self-contained HTML file."),
    "backend": ("synth_nb.cli.backend", "Run the embedded local backend (needs the 'local' extra)."),
    "task-app": ("synth_nb.cli.task_app", "Run a bundled example task app (needs the 'local' extra)."),
    "model-server": ("synth_nb.cli.model_server", "Serve a local model on 127.0.0.1 (needs the 'real-llm' extra)."),
    "enable": ("synth_nb.cli.enable", "Make new IPython kernels load the synth_nb extension."),
}


def invoked_command(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word when that is one (the top level has no option but
    ``--help``, so the command is the first word or there is none)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def build_parser(configured: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser with every command listed and the ``configured`` ones (default: all) given their flags:
    only their modules are imported."""
    parser = argparse.ArgumentParser(prog="synth-nb", description="Synth post-training jobs from Jupyter.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if configured is None or name in configured:
            module = importlib.import_module(module_name)
            module.configure(p)
            p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (default: this program's arguments) and return its exit code; run as
    the program itself (``synth-nb``, ``python -m synth_nb``), start what it will wait for early
    (``head_start``) and leave at once (``_leave``); code calling it in a process that goes on gets neither."""
    program = argv is None and os.path.basename(sys.argv[0]) in PROGRAM_NAMES
    code = _main(argv, program)
    if program:
        _leave(code)
    return code


def _leave(code: int) -> NoReturn:
    """End the process with ``code`` as the interpreter would, less its teardown.

    Measured: after a `train` command's last line, the interpreter freed every module and object one by one
    for 0.2–0.5 s (0.2 s of CPU), for a process about to end. What an exit must still do is done, in the
    interpreter's order: thread pools are told to end and threads that are not daemons are waited for, the
    ``atexit`` functions run (logging's flush among them), and the standard streams are flushed.
    """
    threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's own first step: executors told
    atexit._run_exitfuncs()  # to end, then every thread that is not a daemon waited for; then atexit
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None, program: bool) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = invoked_command(argv)
    early = None
    if command == "train" and program:
        # measured: the `train` module's imports and the backend process's start-up take about as long; the
        # backend starts now, beside them (imported here, not at the top: only `train` has a head start)
        from synth_nb.cli import head_start

        early = head_start.head_start(argv[1:])
    try:
        try:
            args = build_parser([command] if command else []).parse_args(argv)
            code = int(args._module.run(args))
        finally:
            if early is not None:  # started early, never asked for (bad flags, a usage error): stopped
                head_start.abandon(early)
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _output_closed(sys.stdout)
    except SynthNbError as exc:
        # imported here, not at the top: the masking rule pulls pydantic, which `--help` need not pay for
        from synth_nb.secrets import mask_text
        from synth_nb.untrusted import inert_lines

        _say_error(f"error: {mask_text(inert_lines(str(exc)), ())}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say_error("interrupted")
        return 130


def _say_error(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except BrokenPipeError:
        _output_closed(sys.stderr)


def _output_closed(stream: TextIO) -> int:
    """Whoever read ``stream`` left: stop without a traceback, and without the flush at exit failing again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    return EXIT_OUTPUT_CLOSED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
