"""The live monitor panel: status line, progress/ETA, newest events, chart, Cancel, summary and result files.

The panel only *reads* a ``synth_nb.job.Job`` (``updates()``, ``status``, ``events``, ``status_doc``) and
calls ``job.cancel()``; all HTTP lives in the client/job layer. It runs as one task on the kernel's event
loop, so other cells keep running while a job streams. It shows three plain display outputs (status HTML,
chart PNG with an ``<img>`` and alt text, summary Markdown: ``PanelOutputs``), updated in place by display
id, and one ipywidgets row (Cancel, show-all); the saved notebook, nbviewer and ``nbconvert`` keep the
outputs' last state. When the job ends, its result files and bundle (``<results folder>/<job id>/``, written
whichever door followed it) are linked in the summary and said in the row, which becomes text. What the
status output holds beside the status line, and when it is sent again, is ``panel_status``'s; the summary
and the result files it links are ``panel_summary``'s.

Embedding: every output and update goes through IPython's display publisher in the output context that
was current when :meth:`MonitorPanel.display` ran (button presses run in it too). To show a panel in
another cell, call ``panel.display()`` while that cell's context is current (e.g. in a task made by
``output_redirect.CellContext``); ``panel.outputs`` names the display ids, ``panel.bundles()`` the content.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from synth_nb.errors import JobTimeoutError
from synth_nb.flows import get_flow
from synth_nb.job import JobUpdate, JobView
from synth_nb.job.ending import Ending, ending_of
from synth_nb.job.health import LABEL as HEALTH_LABEL
from synth_nb.job.health import LiveHealth
from synth_nb.notebook import collector_pause
from synth_nb.notebook.blocking import CANCEL_CONFIRM_TIMEOUT
from synth_nb.notebook.chart import LiveChart
from synth_nb.notebook.controls import PanelControls
from synth_nb.notebook.headless import PanelLines, is_headless
from synth_nb.notebook.kernel_loop import KernelLoop
from synth_nb.notebook.monitor_view import (
    PanelState,
    StallDetector,
    linked_lines,
    phases_of,
    progress_of,
    status_announcement,
    visible_events,
)
from synth_nb.notebook.panel_outputs import PanelOutputs
from synth_nb.notebook.panel_report import folded_report
from synth_nb.notebook.panel_row import PanelRow
from synth_nb.notebook.panel_status import RECENT_EVENTS, ElapsedClock, PanelStatus
from synth_nb.notebook.panel_summary import PanelSummary
from synth_nb.records import TERMINAL_STATUSES

__all__ = ["MonitorPanel", "PanelOutputs"]


class MonitorPanel:
    """A live view of one job. ``display()`` shows it without blocking; ``await panel`` blocks until done."""

    def __init__(self, job: JobView, *, max_events: int = 8, show_all: bool = False, tick: float = 0.5,
                 chart: LiveChart | None = None, stall: StallDetector | None = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 show_artifacts: bool = True, outputs: PanelOutputs | None = None,
                 notebook_folder: Path | None = None, headless: bool | None = None) -> None:
        self.job = job
        self.flow = get_flow(job.flow)
        self.max_events = max_events
        self.show_all = show_all
        self.tick = tick
        self.outputs = outputs or PanelOutputs.for_job(str(job.id))
        self.chart = chart or LiveChart(job.flow, display_id=self.outputs.chart)
        self.stall = stall or StallDetector()
        self.clock, self.wall = clock, wall
        self.show_artifacts = show_artifacts
        #: no front end draws widgets: no button row, printed progress lines and a final block (``headless``)
        self.headless = is_headless() if headless is None else headless
        self.lines = PanelLines(job, clock=clock, wall=wall) if self.headless else None
        #: links to result files are relative to the notebook's folder (the working directory by default)
        self.summary = PanelSummary(job, self.outputs.summary, notebook_folder=notebook_folder or Path.cwd(),
                                    headless=self.headless)
        self.hidden_count = 0
        self.note: str | None = None
        self.error: str | None = None
        self.final_status: str | None = None
        self.cancel_requested = False
        self.stopped_watching_after: float | None = None  # set when a blocking wait timed out
        self.unreachable: str | None = None  # what the panel says while the backend does not answer
        self.elapsed_clock = ElapsedClock(job, wall)
        self._shown = False
        self._context: contextvars.Context | None = None
        #: the button row: static text of its last state once the job ended or the kernel stopped
        self.row = PanelRow(str(job.id), self._row_head, lambda: self.done)
        self.kernel_stopped = False  # set as the kernel shuts down: the status is then only what was last seen
        self._task: concurrent.futures.Future[str] | None = None
        self._loop: KernelLoop | None = None
        self._live = False  # True once history is in and updates arrive live (for stall timing)
        self.status_output = PanelStatus(job, self.chart, clock=clock)
        self._ingested = 0
        self._paused_collector = False  # this panel holds collector_pause while its job streams
        self._ending: Ending | None = None
        self.health = LiveHealth(job, clock=clock)

    # ------------------------------------------------------------------ state
    def ending(self) -> Ending:
        """How the job ended (``synth_nb.job.ending``: stop reason, estimate beside what it used, gains), read
        once it has ended; what the status line, its rows and the static row say."""
        if self._ending is None or not self.done:
            self._ending = ending_of(self.job, timed_out=self.stopped_watching_after)
        return self._ending

    @property
    def controls(self) -> PanelControls | None:
        """The button row's widgets (None until shown)."""
        return self.row.controls

    @property
    def status(self) -> str:
        return str(self.job.status or "queued")

    @property
    def done(self) -> bool:
        return self.final_status is not None

    def state(self) -> PanelState:
        events = self.job.events[-RECENT_EVENTS:]
        elapsed = self.elapsed_clock.elapsed(self.status)
        now = self.clock()
        stalled = None if self.status in TERMINAL_STATUSES or self.kernel_stopped else self.stall.stalled_for(now)
        return PanelState(
            job_id=str(self.job.id), flow=self.job.flow, algorithm=self.job.algorithm,
            status=self.status, elapsed=elapsed,
            progress=progress_of(self.job.status_doc, events, elapsed, status=self.status),
            events=visible_events(self.job.flow, events, self.max_events, show_all=self.show_all),
            hidden_count=self.hidden_count, show_all=self.show_all, stalled_for=stalled,
            usual_gap=self.stall.usual_gap(), note=self.note, error=self.error or self.unreachable,
            last_seen=self.kernel_stopped and not self.done,
            phases=phases_of(self.job), linked=tuple(linked_lines(self.job, final=self.done)),
            ending=tuple(row for row in self.ending().rows() if row[0] not in ("stopped", HEALTH_LABEL))
            if self.done else (),
            health=self.ending().health if self.done else self.health.current(),
        )

    def _check_reachable(self) -> None:
        """Say when the backend stops answering (the client keeps retrying) and turn Cancel off until it does."""
        since = None if self.done else self.job.unreachable_since
        text = f"backend unreachable since {since:%H:%M:%S}, retrying…" if since is not None else None
        if text != self.unreachable:
            self.unreachable = text
            self.status_output.dirty = True
            if self.controls is not None:
                self.controls.backend_unreachable(text)

    def status_bundle(self, state: PanelState | None = None) -> dict[str, Any]:
        """The status output; with a watchdog, its "budget left" meter sits under the status line."""
        return self.status_output.bundle(state or self.state())

    def ingest(self, update: JobUpdate) -> None:
        """Apply one ``JobUpdate`` (status/event/metric/done) to the chart and counters."""
        if update.kind == "event" and update.event is not None:
            self.chart.add_event(update.event)
            self.hidden_count += self.flow.is_noise(update.event)
        elif update.kind == "metric" and update.metric is not None:
            self.chart.add_metric(update.metric)
        if self._live and update.kind in ("event", "metric"):
            self.stall.observe(self.clock())
        if update.kind == "done":
            self.final_status = str(update.status or self.status)
        self.status_output.dirty = True

    def bundles(self) -> dict[str, dict[str, Any]]:
        """The current content of each plain output, by display id."""
        return {self.outputs.status: self.status_bundle(), self.outputs.chart: self.chart.mimebundle(self.chart.png),
                self.outputs.summary: self.summary.bundle()}

    # ------------------------------------------------------------------ display
    def display(self, *, start: bool = True) -> MonitorPanel:
        """Show status, chart, controls and the summary slot; start the live task on the running loop."""
        self._context = contextvars.copy_context()
        PanelOutputs.show(self.outputs.status, self.status_bundle())
        self.chart.display()
        if not self.headless:
            self.row.show(on_cancel=self.request_cancel, on_show_all=self.set_show_all, show_all=self.show_all)
        self.summary.show()
        self._shown = True
        if start:
            self.start()
        return self

    def _row_head(self) -> str:
        """The first line of the row's static text: the job's state."""
        if self.done:
            return self.ending().headline(str(self.job.id))
        # the kernel is stopping: the status output stops claiming a live status and an ETA too
        self.kernel_stopped = True
        if self._shown and self._context is not None:
            self._context.copy().run(PanelOutputs.update, self.outputs.status, self.status_bundle())
        return (f"The kernel that followed job {self.job.id} stopped while the job was {self.status}: this panel "
                f"no longer updates. The job may still run; re-attach from a kernel: %synth_train --attach {self.job.id}")

    def set_show_all(self, value: bool) -> None:
        """Show (or hide again) the routine events the CLI hides."""
        self.show_all = value
        self.render_status(force=True)

    def export_results(self, folder: str | Path | None = None) -> list[Path]:
        """Write the job's result files into ``<folder>/<job id>/`` (default: its own folder, where they are
        written when it ends) and link them in the summary; returns the files written, the main one first."""
        return self.summary.export(Path(folder) if folder is not None else None)

    def _spawn(self, coro: Any) -> concurrent.futures.Future[Any]:
        """Run ``coro`` on the panel's loop in the output context of the cell that displayed the panel."""
        return (self._loop or KernelLoop.capture()).spawn(coro, context=self._context)

    def start(self) -> MonitorPanel:
        """Schedule :meth:`run` on the kernel's loop (or a private one outside a kernel). Idempotent."""
        if self._task is None:
            self._loop = KernelLoop.capture()
            self._task = self._loop.spawn(self.run())
        return self

    def watch_on(self, loop: asyncio.AbstractEventLoop, timeout: float | None = None
                 ) -> concurrent.futures.Future[str]:
        """Run :meth:`watch` on ``loop`` (where the job's client works) from another thread."""
        if self._task is None:
            self._loop = KernelLoop(loop)
            self._task = asyncio.run_coroutine_threadsafe(self.watch(timeout), loop)
        return self._task

    async def finished(self) -> str | None:
        """Wait, on the calling loop, until the live task has drawn the final state (None if never started)."""
        if self._task is None:
            return None
        return await asyncio.shield(asyncio.wrap_future(self._task))

    def render_status(self, *, force: bool = False) -> None:
        if not self.status_output.due(force=force):
            return
        state = self.state()  # once per render: the output and the announcement read the same state
        if self._shown:
            PanelOutputs.update(self.outputs.status, self.status_bundle(state))
        if self.controls is not None:
            self.controls.announce_status(status_announcement(state))

    # ------------------------------------------------------------------ running
    async def run(self) -> str:
        """Follow the job to its terminal state, redrawing at most every ``tick``; returns the final status."""
        self.job.start_monitoring()
        consumer = asyncio.ensure_future(self._consume())
        try:
            while not consumer.done():
                # wake when the chart may redraw again, so the chart never lags the status table by a tick
                wake = self.tick if not self.chart.dirty else min(self.tick, self.chart.seconds_until_redraw())
                await asyncio.wait({consumer}, timeout=max(wake, 0.02))
                self._live = True
                await self.chart.redraw_async()
                if self.chart.redraws and not self._paused_collector:  # streaming: see collector_pause
                    collector_pause.hold()
                    self._paused_collector = True
                self._check_reachable()
                self.render_status()
                if self.lines is not None and self._shown:
                    self.lines.progress(self._context)
            if not consumer.cancelled() and consumer.exception() is not None:
                exc = consumer.exception()
                self.error = f"monitoring stopped: {type(exc).__name__}: {exc}"
        finally:
            if not consumer.done():
                consumer.cancel()
            if self._paused_collector:
                collector_pause.release()
                self._paused_collector = False
            await self._finish()
        return self.final_status or self.status

    async def _consume(self) -> None:
        async for update in self.job.updates():
            self.ingest(update)
            self._ingested += 1
            if self._ingested % 500 == 0:
                await asyncio.sleep(0)  # a long history must not starve other cells
            if update.kind == "done":
                return

    async def _finish(self) -> None:
        if self.final_status is None and self.status in TERMINAL_STATUSES:
            self.final_status = self.status
        if self.final_status is not None:  # the status line's last word: why the job stopped
            self.note = self.ending().stop.text
        if self.final_status is not None and self.controls is not None:
            self.controls.job_finished()  # after a timeout or a stop the job still runs: Cancel stays useful
        self.chart.ended = self.final_status is not None
        png = None if self.chart.data.empty else await asyncio.to_thread(self.chart.render_png)
        self.chart.publish(png)
        self.render_status(force=True)
        said = ""
        if self.show_artifacts and self.final_status is not None:
            said = await self.summary.collect()
            if said and self.controls is not None:
                self.controls.say(said)
            self.summary.publish()
        if self.final_status is not None:  # the report, its files and bundle written: folded under the status
            self.status_output.report = await asyncio.to_thread(folded_report, self.job)
            self.render_status(force=True)
        if self.final_status is not None:  # nothing left to press: the row becomes text
            self.row.end(self._spawn)
            if self.lines is not None and self._shown:
                self.lines.final(self._context, said, [warning.line() for warning in self.ending().health])

    async def watch(self, timeout: float | None = None) -> str:
        """:meth:`run`, but give up after ``timeout`` seconds: the job keeps running on the backend.

        On timeout the panel says so and how to re-attach, stops following the job, and raises
        ``JobTimeoutError`` with the same advice.
        """
        task = asyncio.ensure_future(self.run())
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if task in done:
            return task.result()
        assert timeout is not None
        self.stopped_watching_after = timeout
        advice = f"re-attach with: %synth_train --attach {self.job.id}"
        self.note = f"stopped watching after {timeout:g} s; the job keeps running on the backend ({advice})"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await self.job.stop_monitoring()
        self.render_status(force=True)
        raise JobTimeoutError(f"job {self.job.id} is still {self.status} after {timeout:g}s (--poll-timeout); "
                              f"it keeps running on the backend ({advice})", job_id=str(self.job.id),
                              status=self.status)

    async def wait(self, timeout: float | None = None) -> str:
        """Block (asynchronously) until the job is terminal and the final chart/summary are drawn.

        Interrupting (Ctrl-C / the kernel's stop button) sends the backend cancel and waits for the
        confirmed terminal state.
        """
        self.start()
        assert self._task is not None
        try:
            status = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._task)), timeout)
        except (KeyboardInterrupt, asyncio.CancelledError):
            await asyncio.shield(self.cancel(by="this cell (interrupted)"))
            raise
        self.republish()
        return status

    def republish(self) -> None:
        """Send the final frames again from the *calling* cell.

        Headless runners (nbclient, papermill) keep only output messages whose parent is the cell being
        executed; the live task's updates belong to the cell that started it, so a later ``await panel``
        re-sends the final status, chart and artifacts, which then replace the outputs by display id.
        """
        self.render_status(force=True)
        self.chart.publish(None)
        self.summary.republish()

    def __await__(self) -> Generator[Any, None, str]:
        return self.wait().__await__()

    async def cancel(self, by: str = "the panel's Cancel button") -> str:
        """Send the backend cancel and wait for the confirmed terminal state (shown in the panel); ``by`` is who
        asked, said in the job's stop reason."""
        self.cancel_requested = True
        self.note = "cancel requested…"
        self.render_status(force=True)
        try:
            status = str(await self.job.cancel(by=by))
            if status not in TERMINAL_STATUSES:
                status = str(await self.job.wait(timeout=CANCEL_CONFIRM_TIMEOUT))
        except Exception as exc:  # shown in the panel, never swallowed silently
            self.error = f"cancel failed: {type(exc).__name__}: {exc}"
            self.render_status(force=True)
            raise
        self.note = f"cancelled: the backend confirmed status {status}"
        self.render_status(force=True)
        return status

    def request_cancel(self) -> concurrent.futures.Future[str]:
        """Thread-safe cancel for button callbacks (may run on a comm thread), on the panel's own loop."""
        return self._spawn(self.cancel())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": f"MonitorPanel(job={self.job.id!r}, status={self.status!r})"}
