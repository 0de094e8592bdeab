"""``synth-nb jobs``: list the jobs submitted from this folder (``.synth_nb/jobs.json``).

What is listed is ``synth_nb.pipeline.jobs.list_jobs``'s answer, the one ``%synth_train --jobs`` shows too (its
``jobs`` action is that one call): each job not recorded as ended is asked of its backend first (all at once,
within a bound); when a backend cannot answer, the recorded status is shown and marked as such. This command
imports that module alone, not the actions and their ``Request``: listing ended jobs costs a few hundredths of
a second of CPU, not half a second (``benchmarks/cli_start.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from synth_nb.job.registry import JobRegistry
from synth_nb.pipeline.jobs import JobList, list_jobs
from synth_nb.untrusted import inert

__all__ = ["configure", "print_jobs", "run"]

#: the columns shown (``JobList.rows`` cells), with their headers; the last one is not padded
COLUMNS = {"job_id": "JOB ID", "flow": "FLOW", "status": "STATUS", "submitted": "SUBMITTED", "last_seq": "LAST SEQ",
           "stopped": "STOPPED", "backend": "BACKEND"}
#: right-aligned columns
NUMBERS = ("last_seq",)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", default=None, metavar="PATH",
                        help="Folder whose .synth_nb/jobs.json to read (default: the working directory).")
    parser.add_argument("--json", dest="json_output", action="store_true", help="Print the records as JSON.")


def print_jobs(listed: JobList, *, as_json: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = listed.records
    if as_json:
        print(json.dumps([asdict(r) for r in records], indent=2), file=out)
        return 0
    if not records:
        print(f"no jobs recorded in {listed.registry.path if listed.registry else 'this folder'}", file=out)
        return 0
    rows = [COLUMNS, *({name: inert(cell) for name, cell in row.items()} for row in listed.rows())]  # the backend's
    *padded, last = COLUMNS
    widths = {name: max(len(row[name]) for row in rows) for name in padded}
    for row in rows:  # columns as wide as their longest cell
        cells = [row[n].rjust(widths[n]) if n in NUMBERS else row[n].ljust(widths[n]) for n in padded]
        print("  ".join([*cells, row[last]]), file=out)
    for note in listed.notes:
        print(f"\nstatus marked (recorded) is the last one seen: {inert(note)}", file=out)
    print("\nre-attach with: synth-nb attach JOB_ID", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder) if args.folder else Path.cwd()
    return print_jobs(asyncio.run(list_jobs(JobRegistry(folder))), as_json=args.json_output)
