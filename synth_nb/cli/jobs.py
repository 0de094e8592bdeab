"""``synth-nb jobs``: list the jobs submitted from this folder (``.synth_nb/jobs.json``).

The status a record holds is the one last seen by a command that followed the job; a job still running
then has usually ended since. Each such job's status is asked of its backend first (all at once, within
``REFRESH_SECONDS``); when a backend cannot answer, the recorded status is shown and marked as such.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from synth_nb.backend import display_url
from synth_nb.errors import SynthNbError
from synth_nb.job.registry import JobRecord, JobRegistry
from synth_nb.records import TERMINAL_STATUSES, normalize_status
from synth_nb.untrusted import inert

#: the whole refresh, however many backends: a listing must not hang on an unreachable one
REFRESH_SECONDS = 10.0

__all__ = ["configure", "print_jobs", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", default=None, metavar="PATH",
                        help="Folder whose .synth_nb/jobs.json to read (default: the working directory).")
    parser.add_argument("--json", dest="json_output", action="store_true", help="Print the records as JSON.")


async def _status_of(record: JobRecord) -> str:
    """The job's status as its backend says it now (raises when the backend cannot say)."""
    from synth_nb import pipeline
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows import get_flow

    target = pipeline.resolve_target(record.backend_url, start_local=False)
    key = pipeline.SecretSources().api_key(target)
    async with AsyncSynthClient(target.url, key, timeout=REFRESH_SECONDS, max_attempts=1) as client:
        doc = await client.get_status(get_flow(record.flow).endpoints, record.job_id)
    return normalize_status(doc.get("status"))


async def _refresh_all(records: list[JobRecord]) -> list[str | BaseException]:
    """Every record's status, asked at once; a backend that does not answer in time gives ``TimeoutError``."""
    tasks = [asyncio.ensure_future(_status_of(r)) for r in records]
    if tasks:
        await asyncio.wait(tasks, timeout=REFRESH_SECONDS)
    answers: list[str | BaseException] = []
    for task in tasks:
        if not task.done():
            task.cancel()
            answers.append(TimeoutError(f"no answer within {REFRESH_SECONDS:.0f} s"))
        else:
            answers.append(task.exception() or task.result())
    return answers


def refresh_statuses(registry: JobRegistry) -> tuple[set[str], list[str]]:
    """Ask the backend of every job not recorded as ended for its status, and record what it says.

    Returns the jobs whose backend could not answer (they keep their recorded status) and one note per
    such backend.
    """
    active = [r for r in registry.list() if (r.status or "") not in TERMINAL_STATUSES]
    stale: set[str] = set()
    notes: dict[str, str] = {}
    for record, answer in zip(active, asyncio.run(_refresh_all(active)), strict=True):
        if isinstance(answer, str):
            if answer and answer != record.status:
                registry.update(record.job_id, status=answer)
            continue
        reason = str(answer).splitlines()[0][:160] if isinstance(answer, SynthNbError | TimeoutError) \
            else type(answer).__name__
        stale.add(record.job_id)
        notes.setdefault(record.backend_url, f"{display_url(record.backend_url)} did not answer ({reason})")
    return stale, list(notes.values())


def print_jobs(registry: JobRegistry, *, as_json: bool = False, out: TextIO | None = None,
               refresh: bool = True) -> int:
    out = out or sys.stdout
    stale, notes = refresh_statuses(registry) if refresh else (set(), [])
    records = registry.list()
    if as_json:
        print(json.dumps([asdict(r) for r in records], indent=2), file=out)
        return 0
    if not records:
        print(f"no jobs recorded in {registry.path}", file=out)
        return 0
    head = ("JOB ID", "FLOW", "STATUS", "SUBMITTED", "LAST SEQ", "BACKEND")
    rows = [tuple(map(inert, (r.job_id, r.flow + (f"/{r.algorithm}" if r.algorithm else ""),
                              (r.status or "-") + (" (recorded)" if r.job_id in stale else ""), r.submitted_at,
                              str(r.last_seq), r.backend_url))) for r in records]  # statuses are the backend's
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head) - 1)]
    for row in (head, *rows):  # columns as wide as their longest cell; LAST SEQ right-aligned
        cells = [cell.rjust(width) if i == 4 else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(row[:-1], widths, strict=True))]
        print("  ".join([*cells, row[-1]]), file=out)
    for note in notes:
        print(f"\nstatus marked (recorded) is the last one seen: {inert(note)}", file=out)
    print("\nre-attach with: synth-nb attach JOB_ID", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    return print_jobs(JobRegistry(Path(args.folder) if args.folder else Path.cwd()), as_json=args.json_output)
