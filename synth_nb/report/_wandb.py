"""Weights & Biases, offline: one W&B run per job (its id is the job's), written under ``--report-dir``
(``runs/wandb/offline-run-<time>-<job id>/``) and sent to W&B later by the user with ``wandb sync``.

Nothing reaches the network while a job is reported: the run is made in offline mode whatever ``WANDB_MODE``
says, with W&B's error reporting off (``WANDB_ERROR_REPORTING=false`` unless set), no code, git or
system-metrics capture and no console capture. The run holds the config as its config (secrets masked,
``Reporter.masked_config``) with the job's id, flow, algorithm and backend under ``synth_nb``; every metric
point as a history row ``{<metric>: value, "step": step}`` (each metric is defined with ``step`` as its x
axis, so metrics keep their own steps and may arrive in any order); when the job ends, its bundle (or
summary) in the run's files, its status in the summary and the tags, and the run finished with the job:
exit code 0 for a success (W&B: finished), 1 for a failure (failed), 130 for a cancelled job (W&B has no
way to mark a run killed from the SDK; the tag and ``synth_nb.status`` say ``cancelled``).

Attaching again opens another offline segment of the same run id (``resume="allow"``): what the earlier
segments hold is read back first with W&B's own reader (``wandb leet inspect --json``), so no point is
written twice, and the new segment's rows continue the run's ``_step`` count.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.report._base import Point, Reporter, shown_path
from synth_nb.secrets.redact import redact

__all__ = ["STEP_KEY", "WandbReporter", "exit_code", "read_records", "run_id"]

#: the history key holding each point's own step (every metric is plotted against it)
STEP_KEY = "step"
_STATUS_EXIT = {"succeeded": 0, "cancelled": 130}
#: W&B run ids: letters, digits, ``-`` and ``_``, at most 64 characters (sync refuses others)
_ID_SAFE = re.compile(r"[^A-Za-z0-9_-]")
#: W&B reserves keys starting with ``_`` (``_step``, ``_runtime``) and the step key is ours
_RESERVED = re.compile(r"^_|^step$")
#: W&B's own reader: ``wandb leet inspect`` prints a run file's records as JSON lines
READ_SECONDS = 120


def run_id(job_id: str) -> str:
    """The W&B run id of a job (its id where W&B accepts it as one)."""
    return _ID_SAFE.sub("-", job_id)[:64] or "job"


def exit_code(job_status: str) -> int:
    """The exit code a terminal job status ends the run with (W&B: 0 finished, any other failed)."""
    return _STATUS_EXIT.get(job_status, 1)


def _quiet_environment() -> dict[str, str]:
    """What W&B needs to stay off the network: offline, no error reports, no messages."""
    return {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false",
            "WANDB_DISABLE_GIT": "true", "WANDB_DISABLE_CODE": "true"}


def read_records(run_file: Path) -> list[dict[str, Any]]:
    """Every record of an offline run's ``.wandb`` file, read with W&B's own reader (``wandb leet inspect``)."""
    env = {**os.environ, **_quiet_environment()}
    done = subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(run_file)],
                          capture_output=True, text=True, env=env, timeout=READ_SECONDS, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wandb could not read {run_file.name}: {done.stderr.strip()[-300:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


class WandbReporter(Reporter):
    name = "wandb"
    modules = ("wandb",)

    run: Any = None
    #: the run's next ``_step`` (W&B's row counter, which must only grow, across segments too)
    _row = 0
    #: the metric keys defined with ``step`` as their x axis
    _defined: frozenset[str] = frozenset()

    @property
    def wandb_dir(self) -> Path:
        """Where W&B keeps its offline runs (``<report dir>/wandb``)."""
        return self.folder / "wandb"

    def where(self) -> str:
        return f"wandb sync {shlex.quote(str(shown_path(self.wandb_dir)))}/offline-run-*"

    def stored_in(self) -> str:
        segments = self.segments()
        return str(shown_path(segments[-1].parent if segments else self.wandb_dir))

    def segments(self) -> list[Path]:
        """The offline run files of this job already under the report folder, oldest first."""
        rid = run_id(self.job.id)
        return sorted(self.wandb_dir.glob(f"offline-run-*-{rid}/run-{rid}.wandb"))

    def _key(self, name: str) -> str:
        return f"metric.{name}" if _RESERVED.search(name) else name

    def _resume(self) -> Mapping[str, Iterable[int]]:
        held: dict[str, list[int]] = {}
        rows = -1
        for segment in self.segments():
            for record in read_records(segment):
                item = (record.get("history") or {}).get("item") or {}
                rows = max(rows, int(item.get("_step", -1)))
                if STEP_KEY in item:
                    for key in item:
                        if not key.startswith("_") and key != STEP_KEY:
                            held.setdefault(key, []).append(int(item[STEP_KEY]))
        self._row = rows + 1
        self.run = self._init(resumed=rows >= 0)
        self._define(held)
        return held

    def _define(self, keys: Iterable[str]) -> None:
        fresh = set(keys) - self._defined
        for key in sorted(fresh):
            self.run.define_metric(key, step_metric=STEP_KEY)
        self._defined |= fresh

    def _init(self, *, resumed: bool) -> Any:
        import wandb

        for key, value in _quiet_environment().items():  # read by W&B's service when it starts
            if key != "WANDB_MODE":
                os.environ.setdefault(key, value)
        job, hidden = self.job, tuple(self.job.hidden)
        self.folder.mkdir(parents=True, exist_ok=True)
        settings = wandb.Settings(mode="offline", silent=True, quiet=True, console="off", disable_git=True,
                                  disable_code=True, save_code=False, x_disable_stats=True,
                                  x_disable_machine_info=True, x_save_requirements=False)
        config = {**(self.masked_config() or {}),
                  "synth_nb": {"job_id": job.id, "flow": job.flow, "algorithm": job.algorithm or "",
                               "backend": redact(job.backend_url, hidden)}}
        # absolute: W&B's service is one process for the whole session, started in whatever folder was current
        run = wandb.init(project=self.project(), id=run_id(job.id), name=job.id, dir=str(self.folder.resolve()),
                         config=config, tags=[job.flow, *([job.algorithm] if job.algorithm else [])],
                         resume="allow" if resumed else None, reinit="create_new", settings=settings)
        run.define_metric(STEP_KEY, hidden=True)
        return run

    def _write(self, points: Sequence[Point]) -> None:
        rows: dict[int, dict[str, float]] = {}
        for point in points:  # one row per step: the points of a burst that share it
            rows.setdefault(point.step, {})[self._key(point.name)] = point.value
        self._define(key for values in rows.values() for key in values)
        for step, values in rows.items():
            self.run.log({**values, STEP_KEY: step}, step=self._row)
            self._row += 1

    def _flushed(self) -> None:
        """W&B's service appends each row to the run file as it comes."""

    def _finish(self, summary: Path | None) -> None:
        run = self.run
        if not self.job.terminal:  # the job goes on: a later attach resumes this run id
            run.mark_preempting()
            self._close()
            return
        files = Path(run.dir)
        bundle = self.bundle_folder()
        if bundle is not None:
            shutil.copytree(bundle, files / "bundle", dirs_exist_ok=True)
            run.save(str(files / "bundle" / "*"), base_path=str(files), policy="now")
        elif summary is not None:
            shutil.copy(summary, files / summary.name)
            run.save(str(files / summary.name), base_path=str(files), policy="now")
        status = self.job.status
        run.summary["synth_nb.status"] = status
        run.tags = (*run.tags, status)
        run.finish(exit_code=exit_code(status))
        self.run = None

    def _close(self) -> None:
        run, self.run = self.run, None
        if run is not None:
            run.finish()
