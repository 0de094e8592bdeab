"""``synth-nb attach JOB_ID``: rebuild a job's full history from the backend and follow it to the end.

The backend comes from ``--backend``, else the job registry (``.synth_nb/jobs.json``), else
``SYNTH_BACKEND_OVERRIDE`` / the hosted default. The key is ``SYNTH_API_KEY``, resolved like every other
secret (``--env-file`` first, then the environment, then the nearest ``.env``). Ctrl-C stops watching and
leaves the job running (exit 130); ``synth-nb cancel JOB_ID`` cancels it. With ``--rollouts`` (RL) or
``--samples`` (SFT) it prints the samples behind the job's numbers instead and returns (``cli.samples``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from synth_nb.cli.samples import add_sample_flags, print_samples, wants_samples
from synth_nb.pipeline import actions
from synth_nb.pipeline.flag_types import add_job_arguments
from synth_nb.pipeline.flags import ALL_EVENTS, FOLLOW_FLAGS, REPORT_FLAGS, add_flags
from synth_nb.pipeline.request import Request

__all__ = ["attach_and_follow", "configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_job_arguments(parser)
    add_flags(parser, FOLLOW_FLAGS, (ALL_EVENTS,), REPORT_FLAGS)
    add_sample_flags(parser)


def attach_and_follow(request: Request) -> int:
    """Re-attach to the request's job and follow it (``synth-nb attach`` and ``synth-nb train --attach``)."""
    from synth_nb.cli.follow import note, run_attach

    found = actions.attachment(request, start_local=False, say=note)
    return run_attach(found, request)


def run(args: argparse.Namespace) -> int:
    args.attach = args.job_id
    request = Request.from_args(args, Path.cwd(), anchor=False)
    if wants_samples(args):
        return print_samples(args, request)
    return attach_and_follow(request)
