"""``synth-nb cancel JOB_ID``: ask the backend to cancel a job, and say how it ended.

Found like ``synth-nb attach`` finds it (``--backend``, else the job registry, else the default). Exit 0
once the backend says the job is cancelled (or had already ended), 1 when it does not confirm.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from synth_nb.pipeline.flag_types import add_job_arguments, seconds
from synth_nb.statuses import TERMINAL_STATUSES
from synth_nb.untrusted import inert

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_job_arguments(parser)
    parser.add_argument("--timeout", type=seconds, default=30.0, metavar="SECONDS",
                        help="How long to wait for the backend to confirm.")


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: `synth-nb cancel --help` and a bad JOB_ID (exit 2) need none of the action,
    # the client or the masking rule (benchmarks/cli_start.py)
    from synth_nb.cli.say import note
    from synth_nb.pipeline import attaching
    from synth_nb.secrets import mask_text

    found = attaching.cancel_attachment(args.job_id, backend=args.backend, flow=args.flow, folder=Path.cwd(),
                                        env_files=args.env_files or (), modal_secrets=args.modal_secrets or (),
                                        say=note)
    status = attaching.cancel_job(found, timeout=args.timeout)
    print(mask_text(f"job {found.job_id}: {inert(status)}", tuple(found.hidden)))
    return 0 if status in TERMINAL_STATUSES else 1
