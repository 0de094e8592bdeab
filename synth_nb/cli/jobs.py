"""``synth-nb jobs``: list the jobs submitted from this folder (``.synth_nb/jobs.json``)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from synth_nb.job.registry import JobRegistry

__all__ = ["configure", "print_jobs", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", default=None, metavar="PATH",
                        help="Folder whose .synth_nb/jobs.json to read (default: the working directory).")
    parser.add_argument("--json", dest="json_output", action="store_true", help="Print the records as JSON.")


def print_jobs(registry: JobRegistry, *, as_json: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = registry.list()
    if as_json:
        print(json.dumps([asdict(r) for r in records], indent=2), file=out)
        return 0
    if not records:
        print(f"no jobs recorded in {registry.path}", file=out)
        return 0
    head = ("JOB ID", "FLOW", "STATUS", "SUBMITTED", "LAST SEQ", "BACKEND")
    rows = [(r.job_id, r.flow + (f"/{r.algorithm}" if r.algorithm else ""), r.status or "-", r.submitted_at,
             str(r.last_seq), r.backend_url) for r in records]
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head) - 1)]
    for row in (head, *rows):  # columns as wide as their longest cell; LAST SEQ right-aligned
        cells = [cell.rjust(width) if i == 4 else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(row[:-1], widths, strict=True))]
        print("  ".join([*cells, row[-1]]), file=out)
    print("\nre-attach with: synth-nb attach JOB_ID", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    return print_jobs(JobRegistry(Path(args.folder) if args.folder else Path.cwd()), as_json=args.json_output)
