"""``synth-nb`` entry point: dispatches to one module per sub-command (imported lazily).

Exit codes: 0 ok, 1 job failed/cancelled/timed out, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from synth_nb.errors import SynthNbError

#: sub-command -> (module, one-line help); each module has ``configure(parser)`` and ``run(args) -> int``
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("synth_nb.cli.train", "Validate, preview and submit training jobs from TOML configs."),
    "attach": ("synth_nb.cli.attach", "Re-attach to a job and stream it to the end."),
    "jobs": ("synth_nb.cli.jobs", "List jobs submitted from this folder."),
    "backend": ("synth_nb.cli.backend", "Run the embedded local backend (needs the 'local' extra)."),
    "task-app": ("synth_nb.cli.task_app", "Run a bundled example task app (needs the 'local' extra)."),
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
    args = build_parser().parse_args(argv)
    try:
        return int(args._module.run(args))
    except SynthNbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
