"""``synth-nb attach JOB_ID``: rebuild a job's full history from the backend and follow it to the end.

The backend comes from ``--backend``, else the job registry (``.synth_nb/jobs.json``), else
``SYNTH_BACKEND_OVERRIDE`` / the hosted default. The key is ``SYNTH_API_KEY``, resolved like every other
secret (``--env-file`` first, then the environment, then the nearest ``.env``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from synth_nb import pipeline
from synth_nb.cli.args import path_text, seconds
from synth_nb.errors import ConfigError
from synth_nb.report import add_report_arguments

__all__ = ["configure", "follow_job", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    from synth_nb.flows import flow_names

    parser.add_argument("job_id", metavar="JOB_ID", help="The job to follow (see `synth-nb jobs`).")
    parser.add_argument("--backend", default=None, metavar="URL", help="Backend base URL (the /api suffix is added).")
    parser.add_argument("--env-file", "--env", dest="env_files", action="append", default=None, metavar="PATH",
                        type=path_text,
                        help="A .env file to read SYNTH_API_KEY from (repeatable; beats the environment).")
    parser.add_argument("--flow", choices=flow_names(), default=None,
                        help="The job's flow, when it is not in the registry (otherwise probed).")
    parser.add_argument("--poll-interval", type=seconds, default=5.0, metavar="SECONDS",
                        help="Slowest polling interval when the backend has no event stream.")
    parser.add_argument("--poll-timeout", type=seconds, default=3600.0, metavar="SECONDS",
                        help="Stop watching (exit 1, the job keeps running) after this long.")
    parser.add_argument("--record", default=None, metavar="PATH", type=path_text, help="Save the job's stream to a JSONL recording.")
    add_report_arguments(parser)


def follow_job(job_id: str, args: argparse.Namespace) -> int:
    """Re-attach to ``job_id`` and follow it (``synth-nb attach`` and ``synth-nb train --attach``)."""
    from synth_nb.cli.follow import FollowOptions, run_attach
    from synth_nb.job import JobRegistry

    target = pipeline.attach_target(job_id, args.backend, JobRegistry(Path.cwd()), start_local=False)
    if not target.started:
        raise ConfigError("re-attaching needs the URL of a running backend, not 'local'", key="backend",
                          hint="start one with `synth-nb backend` and pass --backend URL")
    sources = pipeline.SecretSources(env_files=tuple(Path(p) for p in args.env_files or ()),
                                     modal_secrets=tuple(getattr(args, "modal_secrets", None) or ()))
    bundle = sources.resolve(target)
    hidden = [s.get_secret_value() for s in bundle.values()]
    return run_attach(job_id, target, sources.api_key(target), FollowOptions.from_args(args),
                      flow=getattr(args, "flow", None), secrets=hidden)


def run(args: argparse.Namespace) -> int:
    return follow_job(args.job_id, args)
