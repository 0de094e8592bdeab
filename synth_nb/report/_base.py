"""``Reporter``: what every tracker writer shares (one subclass per tracker, as HF Trainer's ``report_to``).

A reporter writes what a job already holds, then follows it as a listener: metric points are gathered
and written once per burst (one history page, one SSE frame), so a backfill of thousands of points is a
few batched writes. Each tracker first says what it already holds (``_resume``), so attaching twice, or
again after a restart, never writes a point twice. A tracker failing never stops the job being followed:
the reporter says so once on stderr and stops writing.

The job is seen only through ``ReportedJob`` (``synth_nb.job.Job``'s public surface), so this package
imports no job, CLI or notebook module and ``Job.report_to`` can delegate here.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
import tempfile
import tomllib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from synth_nb.config.discover import BUNDLE_RECORD
from synth_nb.errors import ConfigError, SynthNbError
from synth_nb.flows.artifacts import FinishedJob
from synth_nb.plan import mask_payload
from synth_nb.secrets import mask_text

__all__ = ["DEFAULT_PROJECT", "EXTRA_HINT", "Point", "ReportedJob", "Reporter", "missing_modules"]

EXTRA_HINT = "pip install 'synth-nb[report]'"
#: the experiment / project a job's run goes to when its config file is not known
DEFAULT_PROJECT = "synth-nb"
#: MLflow's ``log_batch`` takes at most 1000 metrics a call; TensorBoard takes any number
BATCH = 1000


class ReportedJob(FinishedJob, Protocol):
    """The part of ``synth_nb.job.Job`` a reporter reads (``registry``: its folder's ``JobRegistry``; the job's
    files, its bundle among them, are in ``<results_folder>/<job id>/``)."""

    algorithm: str | None
    backend_url: str
    registry: Any
    results_folder: Path | None

    @property
    def hidden(self) -> Sequence[str]: ...

    @property
    def done(self) -> bool: ...

    @property
    def terminal(self) -> bool: ...

    def add_listener(self, listener: Callable[[Any], Any]) -> None: ...

    def export_summary(self, folder: str | Path | None = None) -> Path: ...


@dataclass(frozen=True)
class Point:
    """One metric point as a tracker writes it; ``time`` is seconds since the epoch (None: now)."""

    name: str
    step: int
    value: float
    time: float | None = None

    @classmethod
    def of(cls, point: Any) -> Point:
        return cls(str(point.name), int(point.step), float(point.value), _epoch(getattr(point, "created_at", None)))


def _epoch(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def shown_path(path: Path) -> Path:
    """``path`` as a command run from the working folder names it: relative when it is inside, else absolute."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve())
    except ValueError:
        return absolute


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


class Reporter(ABC):
    """Writes one job's metrics (and, when it ends, its summary) to one tracker."""

    #: the ``--report-to`` name
    name: ClassVar[str]
    #: the modules the tracker needs (the ``report`` extra)
    modules: ClassVar[tuple[str, ...]]

    def __init__(self, job: ReportedJob, folder: Path, experiment: str | None = None) -> None:
        self.job = job
        #: ``--report-dir``: TensorBoard's event files and the default MLflow store live here
        self.folder = Path(folder)
        self.experiment = experiment
        #: per metric name: the steps the tracker holds
        self.written: dict[str, set[int]] = {}
        #: the problem that stopped this reporter (None while it writes)
        self.problem: str | None = None
        self.ended = False
        self._pending: list[Point] = []
        self._scheduled = False

    @classmethod
    def require(cls) -> None:
        """``ConfigError`` (exit 2) naming the extra when the tracker's library is not installed."""
        missing = missing_modules(cls.modules)
        if missing:
            raise ConfigError(f"--report-to {cls.name} needs {', '.join(missing)}, which is not installed",
                              key="report-to", hint=EXTRA_HINT)

    def __repr__(self) -> str:
        state = "failed" if self.problem else "ended" if self.ended else "following"
        return f"{type(self).__name__}(job={self.job.id!r}, {state}, points={self.count}) → {self.where()}"

    def where(self) -> str:
        """Where the tracker keeps the job, as the command that shows it (``tensorboard --logdir runs``)."""
        return str(shown_path(self.folder))

    def stored_in(self) -> str:
        """The folder (or store) this job's run was written to, as a command run from here names it."""
        return str(shown_path(self.folder))

    def said(self) -> str:
        """The one line a command prints when following ends: where the job went and how to look at it
        (``report: tensorboard holds 24 points of job X in runs/X · view: tensorboard --logdir runs``), or why not."""
        if self.problem is not None:
            return f"report: {self.name} stopped for job {self.job.id}: {self.problem}"
        return (f"report: {self.name} holds {self.count} points of job {self.job.id} in {self.stored_in()} · "
                f"view: {self.where()}")

    @property
    def count(self) -> int:
        """How many points the tracker holds for this job."""
        return sum(map(len, self.written.values()))

    # -- following --------------------------------------------------------------------------------

    def follow(self) -> Reporter:
        """Open the tracker, write what the job holds that the tracker lacks, then follow the job."""
        self.require()
        if not self._guard(self._open_and_backfill):
            return self
        if self.job.done:
            self._guard(self._end)
        else:
            self.job.add_listener(self._on_update)
        return self

    def _open_and_backfill(self) -> None:
        self.written = {name: set(steps) for name, steps in self._resume().items()}
        self._pending = [Point.of(point) for point in self.job.metrics]
        self._flush()

    def _on_update(self, update: Any) -> None:
        if self.problem is not None or self.ended:
            return
        if update.kind == "metric" and update.metric is not None:
            self._pending.append(Point.of(update.metric))
            self._schedule()
        elif update.kind == "done":
            self._guard(self._end)

    def _schedule(self) -> None:
        """Flush once the current burst is in: after the callback that ingests it (no loop: now)."""
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._guard(self._flush)
            return
        self._scheduled = True
        loop.call_soon(self._guard, self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        fresh = []
        for point in pending:
            steps = self.written.setdefault(self._key(point.name), set())
            if point.step not in steps:
                steps.add(point.step)
                fresh.append(point)
        for start in range(0, len(fresh), BATCH):
            self._write(fresh[start:start + BATCH])
        if fresh:
            self._flushed()

    def _end(self) -> None:
        if self.ended:
            return
        self._flush()
        self.ended = True
        if not self.job.terminal:  # following stopped (the job goes on): a later attach resumes the run
            self._finish(None)
            return
        with tempfile.TemporaryDirectory(prefix="synth-nb-report-") as scratch:
            self._finish(self._summary(Path(scratch)))

    def _summary(self, folder: Path) -> Path | None:
        """The flow's summary file (prompt learning: ``summary.md``), or None for flows without one."""
        try:
            return self.job.export_summary(folder)
        except SynthNbError:
            return None

    def _guard(self, action: Callable[..., None], *args: Any) -> bool:
        """Run ``action``; a tracker failure stops this reporter (said once), never the job's monitor."""
        if self.problem is not None:
            return False
        try:
            action(*args)
        except Exception as exc:  # any tracker error (I/O, protobuf, MLflow, SQL): reported, then contained
            self.problem = mask_text(f"{type(exc).__name__}: {exc}".splitlines()[0], tuple(self.job.hidden))
            print(f"warning: --report-to {self.name} stopped for job {self.job.id}: {self.problem}",
                  file=sys.stderr, flush=True)
            with contextlib.suppress(Exception):
                self._close()
            return False
        return True

    # -- where the job's config and bundle are (its folder's registry) ------------------------------

    def config_path(self) -> Path | None:
        record = self._record()
        if record is None or not getattr(record, "config_path", None):
            return None
        path = Path(record.config_path)
        return path if path.is_absolute() else Path(self.job.registry.folder) / path

    def bundle_folder(self) -> Path | None:
        """The job's bundle (written in its folder when it ended, ``synth_nb.job.results``), if there is one."""
        folder = self.job.results_folder
        bundle = Path(folder) / self.job.id if folder is not None else None
        return bundle if bundle is not None and (bundle / BUNDLE_RECORD).is_file() else None

    def project(self) -> str:
        """Where the tracker groups the job's run: the config file's name (``gepa`` for ``gepa.toml``)."""
        config = self.config_path()
        return config.stem if config is not None else DEFAULT_PROJECT

    def masked_config(self) -> dict[str, Any] | None:
        """The job's config file as a document, every secret masked (``plan.mask_payload``: values under
        secret names, the job's known secrets, key-shaped strings); None when it is not known or unreadable."""
        path = self.config_path()
        if path is None:
            return None
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None  # the config moved or changed since: the run keeps its metrics
        masked = mask_payload(document, list(self.job.hidden), shapes=True)
        return masked if isinstance(masked, dict) else None

    def _record(self) -> Any:
        registry = self.job.registry
        if registry is None:
            return None
        try:
            return registry.get(self.job.id)
        except (OSError, SynthNbError):
            return None

    # -- one tracker --------------------------------------------------------------------------------

    def _key(self, name: str) -> str:
        """The tracker's name for a metric (as ``_resume`` reports it)."""
        return name

    @abstractmethod
    def _resume(self) -> Mapping[str, Iterable[int]]:
        """Open (or find) this job's place in the tracker; the steps it already holds per metric name."""

    @abstractmethod
    def _write(self, points: Sequence[Point]) -> None:
        """Write points the tracker does not hold yet."""

    @abstractmethod
    def _flushed(self) -> None:
        """After a burst: make it visible to readers now."""

    @abstractmethod
    def _finish(self, summary: Path | None) -> None:
        """The job ended: write its summary, end the run, release the tracker."""

    @abstractmethod
    def _close(self) -> None:
        """Release the tracker after a failure."""
