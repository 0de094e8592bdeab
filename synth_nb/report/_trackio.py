"""Trackio, local: one run per job (named by the job's id) in Trackio's local store, a SQLite file per project.

The store is ``TRACKIO_DIR`` when set, else ``<report dir>/trackio`` (Trackio reads the folder once, when it is
first imported: a process that imported Trackio before keeps the folder it chose then; ``where()`` names the
one in use). Nothing is sent anywhere unless the environment itself names a Space or server
(``TRACKIO_SPACE_ID``, ``TRACKIO_SERVER_URL``), which Trackio then honours; no dashboard is started, no
system metrics are logged. The project is the config file's name. The run holds the config as its config
(secrets masked, ``Reporter.masked_config``) with the job's id, flow, algorithm and backend under
``synth_nb`` (recorded with an empty first row: Trackio keeps a run once it has a row); every metric point at
its own step (the points of a burst that share a step in one row); when
the job ends, its bundle (or summary) as an artifact (``<job id>-bundle``) and an alert saying how it ended:
``info`` for a success, ``error`` for a failure, ``warn`` for a cancelled job (Trackio runs have no status
of their own).

Each run is opened in a context of its own (``contextvars``): ``trackio.init`` ends the current run of its
context, and two jobs reported at once must not end each other's. Trackio's messages on stdout are kept out
of the command's output. Attaching again resumes the run by name (``resume="allow"``) after reading back,
with Trackio's own storage API, the steps it holds, so no point is written twice.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from synth_nb.report._base import Point, Reporter, shown_path
from synth_nb.secrets.redact import redact

__all__ = ["ALERT_LEVELS", "TrackioReporter", "store_folder"]

#: the alert level a terminal job status ends the run with
ALERT_LEVELS = {"succeeded": "info", "cancelled": "warn"}
_T = TypeVar("_T")


def store_folder(report_dir: Path) -> Path:
    """Trackio's store: the folder Trackio uses in this process (``TRACKIO_DIR`` is read once, on import)."""
    if "trackio" in sys.modules:
        return Path(sys.modules["trackio"].utils.TRACKIO_DIR)
    return Path(os.environ.get("TRACKIO_DIR") or report_dir / "trackio")


def _hushed(action: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Run a Trackio call with its stdout messages (project, dashboard, alert banners) kept out of ours."""
    with contextlib.redirect_stdout(io.StringIO()):
        return action(*args, **kwargs)


class TrackioReporter(Reporter):
    name = "trackio"
    modules = ("trackio",)

    run: Any = None

    @property
    def store(self) -> Path:
        return store_folder(self.folder)

    def where(self) -> str:
        folder = shlex.quote(str(shown_path(self.store)))
        return f"TRACKIO_DIR={folder} trackio show --project {shlex.quote(self.project())}"

    def stored_in(self) -> str:
        return str(shown_path(self.store))

    def _import(self) -> Any:
        if "trackio" not in sys.modules and not os.environ.get("TRACKIO_DIR"):
            self.folder.mkdir(parents=True, exist_ok=True)
            os.environ["TRACKIO_DIR"] = str((self.folder / "trackio").resolve())  # read once, on import
        import trackio

        return trackio

    def _resume(self) -> Mapping[str, Iterable[int]]:
        trackio = self._import()
        from trackio.sqlite_storage import SQLiteStorage

        job, hidden = self.job, tuple(self.job.hidden)
        project = self.project()
        held: dict[str, list[int]] = {}
        for row in SQLiteStorage.get_logs(project, job.id):
            for key, value in row.items():
                if key not in ("step", "timestamp") and isinstance(value, int | float):
                    held.setdefault(key, []).append(int(row["step"]))
        config = {**(self.masked_config() or {}),
                  "synth_nb": {"job_id": job.id, "flow": job.flow, "algorithm": job.algorithm or "",
                               "backend": redact(job.backend_url, hidden)}}
        known = job.id in SQLiteStorage.get_runs(project)
        self.run = contextvars.Context().run(
            _hushed, trackio.init, project=project, name=job.id, config=config, resume="allow", embed=False,
            auto_log_cpu=False, auto_log_gpu=False)
        if not known:  # Trackio records a run (and its config) with its first row: a job without points has one
            self.run.log({}, step=0)
        return held

    def _write(self, points: Sequence[Point]) -> None:
        rows: dict[int, dict[str, float]] = {}
        for point in points:
            rows.setdefault(point.step, {})[point.name] = point.value
        for step, values in rows.items():
            self.run.log(values, step=step)

    def _flushed(self) -> None:
        """Trackio's sender thread writes each row to the store as it comes (``finish`` waits for it)."""

    def _finish(self, summary: Path | None) -> None:
        run = self.run
        if self.job.terminal:
            bundle = self.bundle_folder()
            if bundle is not None or summary is not None:
                source = bundle if bundle is not None else summary
                _hushed(run.log_artifact, str(source), name=f"{self.job.id}-bundle", type="synth-nb-bundle")
            import trackio

            status = self.job.status
            level = trackio.AlertLevel(ALERT_LEVELS.get(status, "error"))
            _hushed(run.alert, f"job {self.job.id} {status}", text=f"the job ended with status {status}",
                    level=level)
        self._close()

    def _close(self) -> None:
        run, self.run = self.run, None
        if run is not None:
            _hushed(run.finish)
