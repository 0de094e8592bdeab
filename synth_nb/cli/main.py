"""``synth-nb`` entry point: dispatches to one module per sub-command (imported lazily).

Exit codes: 0 ok, 1 job failed/cancelled/timed out, 2 usage or config error, 130 interrupted, 141 the
reader of the output went away (``synth-nb train --dry-run --json | head -1``): the code a shell reports
for a command ended by SIGPIPE, so ``set -o pipefail`` scripts see what they would see with any other tool.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from synth_nb.errors import SynthNbError
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert_lines

__all__ = ["EXIT_OUTPUT_CLOSED", "main"]

#: 128 + SIGPIPE
EXIT_OUTPUT_CLOSED = 141

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synth-nb", description="Synth post-training jobs from Jupyter.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.configure(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        code = int(args._module.run(args))
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _output_closed(sys.stdout)
    except SynthNbError as exc:
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
