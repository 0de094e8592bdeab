"""``synth-nb attach JOB_ID``: rebuild a job's full history from the backend and follow it to the end.

The backend comes from ``--backend``, else the job registry (``.synth_nb/jobs.json``), else
``SYNTH_BACKEND_OVERRIDE`` / the hosted default. The key is ``SYNTH_API_KEY`` (``--env-file`` first).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dotenv import dotenv_values

from synth_nb.errors import SecretsError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job_id", metavar="JOB_ID", help="The job to follow (see `synth-nb jobs`).")
    parser.add_argument("--backend", default=None, metavar="URL", help="Backend base URL (the /api suffix is added).")
    parser.add_argument("--env-file", "--env", dest="env_files", action="append", default=None, metavar="PATH",
                        help="A .env file to read SYNTH_API_KEY from (repeatable; beats the environment).")
    parser.add_argument("--flow", choices=("rl", "sft", "prompt_learning"), default=None,
                        help="The job's flow, when it is not in the registry (otherwise probed).")
    parser.add_argument("--poll-interval", type=float, default=5.0, metavar="SECONDS",
                        help="Slowest polling interval when the backend has no event stream.")
    parser.add_argument("--poll-timeout", type=float, default=3600.0, metavar="SECONDS",
                        help="Stop watching (exit 1, the job keeps running) after this long.")
    parser.add_argument("--record", default=None, metavar="PATH", help="Save the job's stream to a JSONL recording.")


def api_key_from(env_files: list[str] | None, environ: dict[str, str] | None = None) -> str:
    """SYNTH_API_KEY from the first ``--env-file`` that has it, else the process environment."""
    for env_file in env_files or []:
        path = Path(env_file)
        if not path.is_file():
            raise SecretsError(f"env file {path} does not exist")
        value = dotenv_values(path).get("SYNTH_API_KEY")
        if value:
            return value
    value = (environ if environ is not None else os.environ).get("SYNTH_API_KEY", "")
    if not value:
        raise SecretsError("missing SYNTH_API_KEY: export it or pass --env-file PATH to a .env that defines it")
    return value


def backend_for(job_id: str, arg: str | None) -> str:
    from synth_nb.backend_target import resolve_backend
    from synth_nb.job import JobRegistry

    if arg:
        return resolve_backend(arg, {})
    record = JobRegistry(Path.cwd()).get(job_id)
    if record is not None:
        return record.backend_url
    return resolve_backend(None)


def run(args: argparse.Namespace) -> int:
    from synth_nb.cli._stream import run_plans

    backend = backend_for(args.job_id, args.backend)
    key = api_key_from(args.env_files)
    args.attach = args.job_id
    return run_plans([], args, backend, key)
