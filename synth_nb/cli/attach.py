"""``synth-nb attach JOB_ID``: rebuild a job's full history from the backend and follow it to the end.

The backend comes from ``--backend``, else the job registry (``.synth_nb/jobs.json``), else
``SYNTH_BACKEND_OVERRIDE`` / the hosted default. The key is ``SYNTH_API_KEY``, resolved like every other
secret (``--env-file`` first, then the environment, then the nearest ``.env``). Ctrl-C stops watching and
leaves the job running (exit 130); ``synth-nb cancel JOB_ID`` cancels it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from synth_nb.pipeline import actions
from synth_nb.pipeline.flags import ALL_EVENTS, path_text, seconds
from synth_nb.pipeline.request import Request
from synth_nb.report import add_report_arguments

__all__ = ["add_job_arguments", "configure", "follow", "run"]


def add_job_arguments(parser: argparse.ArgumentParser) -> None:
    """``JOB_ID`` and where it lives: what ``attach`` and ``cancel`` share."""
    from synth_nb.flows import flow_names

    parser.add_argument("job_id", metavar="JOB_ID", help="The job (see `synth-nb jobs`).")
    parser.add_argument("--backend", default=None, metavar="URL", help="Backend base URL (the /api suffix is added).")
    parser.add_argument("--env-file", "--env", dest="env_files", action="append", default=None, metavar="PATH",
                        type=path_text,
                        help="A .env file to read SYNTH_API_KEY from (repeatable; beats the environment).")
    parser.add_argument("--flow", choices=flow_names(), default=None,
                        help="The job's flow, when it is not in the registry (otherwise probed).")


def configure(parser: argparse.ArgumentParser) -> None:
    add_job_arguments(parser)
    parser.add_argument("--poll-interval", type=seconds, default=5.0, metavar="SECONDS",
                        help="Slowest polling interval when the backend has no event stream.")
    parser.add_argument("--poll-timeout", type=seconds, default=3600.0, metavar="SECONDS",
                        help="Stop watching (exit 1, the job keeps running) after this long.")
    parser.add_argument("--record", default=None, metavar="PATH", type=path_text, help="Save the job's stream to a JSONL recording.")
    parser.add_argument(*ALL_EVENTS.flags, **ALL_EVENTS.kwargs)
    add_report_arguments(parser)


def follow(request: Request) -> int:
    """Re-attach to the request's job and follow it (``synth-nb attach`` and ``synth-nb train --attach``)."""
    from synth_nb.cli.follow import run_attach

    found = actions.attachment(request, start_local=False)
    return run_attach(found, request)


def run(args: argparse.Namespace) -> int:
    args.attach = args.job_id
    return follow(Request.from_args(args, Path.cwd(), anchor=False))
