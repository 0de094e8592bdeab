"""What a finished job leaves on disk, written once, in one place: its folder (``<results_folder>/<job id>/``).

The folder holds the flow's result files (prompt learning: ``summary.md`` and its curve), the job's HTML
report (``report.html``, ``synth_nb.job.report_html``) and, for a job
submitted from this project folder, its bundle (``synth_nb.pipeline.bundle``: what it was sent with and all
it did), whichever command or notebook followed it to its end. ``write_results`` is the one writer: it runs
when a job ends (``write_at_end``: the follow stage asks it for every job it follows, a kept bundle for the
job it belongs to), a panel asks it for what was written, and it writes a job's files once however many ask. ``write_files`` is the export a user asks for (somewhere else
too, ``job.export_summary(folder)``): the flow's files only.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from synth_nb.config.discover import BUNDLE_RECORD
from synth_nb.errors import SynthNbError
from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import FinishedJob, job_results_dir
from synth_nb.job.history import JobUpdate
from synth_nb.job.report_html import REPORT_FILE, write_job_report

__all__ = ["Results", "RunBundle", "keep_bundle", "results_dir", "write_at_end", "write_files", "write_results"]


class RunBundle(Protocol):
    """What a job was submitted with (``synth_nb.pipeline.bundle.RunRecord``), written beside its results."""

    def write(self, job: Any, files: Sequence[Path]) -> Path:
        """Write the bundle of ``job`` (whose result files are ``files``) and return its folder."""


class _Located(FinishedJob, Protocol):
    @property
    def results_folder(self) -> Path | None: ...


class _Followed(_Located, Protocol):
    @property
    def done(self) -> bool: ...

    def add_listener(self, listener: Callable[[JobUpdate], Any]) -> None: ...


@dataclass(frozen=True)
class Results:
    """What ``write_results`` did for one job: where, which files, the bundle, and any problem."""

    #: the job's one place (its bundle folder)
    folder: Path
    #: the flow's result files written, the main one first
    files: tuple[Path, ...] = ()
    #: the bundle's folder once written (or found complete, ``earlier``)
    bundle: Path | None = None
    #: why the result files could not be written
    problem: str | None = None
    #: why the bundle could not be written
    bundle_problem: str | None = None
    #: the bundle was complete already: whoever followed the job to its end wrote it, and its results
    earlier: bool = False
    #: the job's HTML report (``report.html`` beside its files, in its bundle too), once written
    report: Path | None = None
    #: why the report could not be written (the result files and the bundle are whole without it)
    report_problem: str | None = None


_lock = threading.Lock()
_bundles: weakref.WeakKeyDictionary[Any, RunBundle] = weakref.WeakKeyDictionary()
_written: weakref.WeakKeyDictionary[Any, Results] = weakref.WeakKeyDictionary()
_listening: weakref.WeakSet[Any] = weakref.WeakSet()


def results_dir(job: _Located) -> Path:
    """``<results_folder>/<job id>/``: where the job's files go (``results/<job id>/`` when no folder is known)."""
    return job_results_dir(job.id, job.results_folder)


def keep_bundle(job: _Followed, bundle: RunBundle) -> None:
    """Write ``bundle`` with ``job``'s results when it ends (the job was submitted from here), whoever
    waits for it (a ``--no-poll`` job awaited in a later cell too)."""
    with _lock:
        _bundles[job] = bundle
    write_at_end(job)


def write_at_end(job: _Followed) -> None:
    """``write_results(job)`` when the job ends (now, when it has ended); one listener per job, however
    many ask."""
    with _lock:
        if job in _listening:
            return
        _listening.add(job)
    if job.done:
        write_results(job)
        return

    def at_end(update: JobUpdate) -> None:
        if update.kind == "done":
            write_results(job)

    job.add_listener(at_end)


def write_files(job: FinishedJob, folder: Path) -> list[Path]:
    """Write the flow's result files into ``folder`` (none for a flow without any): the main one first, then
    the others this call wrote (the folder may hold other files of the job, such as its bundle)."""
    before = _stamps(folder)
    main = get_flow(job.flow).write_results(job, folder)
    if main is None:
        return []
    return [main, *sorted(p for p, stamp in _stamps(folder).items() if before.get(p) != stamp and p != main)]


def write_results(job: _Located) -> Results:
    """Write the job's result files and its bundle into its folder, once: a second call (another listener,
    the panel) returns what the first did. Nothing is raised: a problem is in the answer."""
    with _lock:
        done = _written.get(job)
        if done is None:
            done = _written[job] = _write(job, _bundles.get(job))
    return done


def _write(job: _Located, bundle: RunBundle | None) -> Results:
    folder = results_dir(job)
    if bundle is None and (folder / BUNDLE_RECORD).is_file():
        return Results(folder, bundle=folder, earlier=True)
    files: list[Path] = []
    problem = bundle_problem = None
    written = None
    try:
        files = write_files(job, folder)
    except Exception as exc:  # a flow's writer may fail on anything the job holds: said, never raised
        problem = f"could not write the result files to {folder}/: {type(exc).__name__}: {exc}"
    if bundle is not None:
        try:
            written = bundle.write(job, files)
        except (OSError, SynthNbError, TypeError, ValueError) as exc:
            bundle_problem = f"could not write the bundle to {folder}: {exc}"
    report = folder / REPORT_FILE if written is not None and (folder / REPORT_FILE).is_file() else None
    report_problem = None
    if report is None and (written is not None or files):  # a bundle writes its own; this says why it did not
        try:
            report = write_job_report(job, folder=folder)
        except Exception as exc:  # like a flow's writer: said, never raised (the result files are written)
            report_problem = f"could not write {REPORT_FILE} to {folder}/: {type(exc).__name__}: {exc}"
    return Results(folder, tuple(files), written, problem, bundle_problem, report=report,
                   report_problem=report_problem)


def _stamps(folder: Path) -> dict[Path, tuple[int, int]]:
    """(modification time, size) of each file in ``folder``: what changed tells what was written."""
    if not folder.is_dir():
        return {}
    return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir() if p.is_file()}
