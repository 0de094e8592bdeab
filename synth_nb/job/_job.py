"""``Job``: one backend job's history (``JobHistory``) kept current by a background ``JobMonitor``.

Consumers: ``wait()``, ``updates()`` (history first, then live), listeners (CLI printer, recorder), the
notebook panel. A job holds no loop-bound object from its constructor: its waiting primitives are made per
event loop on demand, and ``rebind(client)`` moves it, history included, onto a client for another loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.client import TRANSIENT_ERRORS, AsyncSynthClient, EventRecord
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ClientClosedError, ConfigError, JobTimeoutError, SynthNbError
from synth_nb.flows import all_flows, flow_named_in, get_flow, guess_flow
from synth_nb.flows.artifacts import job_results_dir
from synth_nb.job import results
from synth_nb.job._find import find_job
from synth_nb.job._monitor import JobMonitor, PollSettings
from synth_nb.job.cancelling import send_cancel, until_terminal
from synth_nb.job.ending import Ending, ending_of
from synth_nb.job.history import (
    DoneSignal,
    JobHistory,
    JobUpdate,
    _require_pandas,
    call_on_loop,
    running_loop,
)
from synth_nb.job.masking import masked_doc, masked_event, masked_events, searched
from synth_nb.job.samples import SampleViews
from synth_nb.records import Event

if TYPE_CHECKING:
    from synth_nb.flows.base import Explorer
    from synth_nb.job.registry import JobRegistry
    from synth_nb.job.watchdog import Watchdog
    from synth_nb.report import Reporter

__all__ = ["Job"]

class Job(JobHistory, SampleViews):
    """A submitted or re-attached job; call ``start_monitoring()`` / ``await wait()`` to follow it."""

    def __init__(
        self,
        id: str,
        flow: str,
        client: AsyncSynthClient,
        *,
        endpoints: FlowEndpoints,
        algorithm: str | None = None,
        backend_url: str | None = None,
        poll_interval: float = 5.0,
        min_interval: float = 0.05,
        use_sse: bool = True,
        registry: JobRegistry | None = None,
        metrics_limit: int = 200,
        results_folder: Path | None = None,
        hidden: Sequence[str] = (),
    ) -> None:
        super().__init__(id, flow, algorithm=algorithm)
        self.client = client
        #: values masked in everything the job takes in from the backend (``synth_nb.job.masking``): the
        #: client's key and ``hidden`` (the plan's secrets)
        self.hidden = searched((*client.secret_values(), *hidden))
        #: the flow's backend paths (the plan's, or the ones an attach found the job under)
        self.endpoints = endpoints
        self.backend_url = backend_url or client.shown_url
        self.poll_interval = poll_interval
        self.min_interval = min_interval
        self.use_sse = use_sse
        self.registry = registry
        self.metrics_limit = metrics_limit
        #: where the job's folder is (``<results_folder>/<job id>/``: result files, bundle): the config's
        #: ``results_folder``, else, for a job submitted from the registry's folder, its ``.synth_nb/runs``
        #: (None: not known, such as a job attached to that was sent from elsewhere: ``results/<job id>/``)
        self.results_folder = results_folder if results_folder is not None or registry is None \
            else registry.folder_of(id)
        #: the budget watchdog following this job (``--max-minutes`` ...): ``watchdog.meters()`` is each
        #: limit with what is used and left, ``watchdog.report()`` which one stopped the job
        self.watchdog: Watchdog | None = None
        #: the job the status document names as ``linked_job_id`` (an RL job's training job), attached to
        #: and followed alongside this one; ``linked_note`` says which and how (or why it could not be)
        self.linked: Job | None = None
        self.linked_note: dict[str, Any] | None = None
        #: the pre-flight estimate the job was sent with (``synth_nb.pipeline.estimate.plan_estimate``, plain
        #: data), set at submission or read back from its folder on attach; None: none is known
        self.estimate: dict[str, Any] | None = None
        #: who sent the cancel request from here ("this command (Ctrl-C)", "the panel's Cancel button"...)
        self.cancelled_by: str | None = None
        self._follows_links = True
        self._done = DoneSignal()
        self._task: asyncio.Task[None] | None = None
        self._monitor: JobMonitor | None = None
        self._fatal: BaseException | None = None
        self._loop = running_loop()
        self._ending: tuple[tuple[Any, ...], Ending] | None = None

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, flow={self.flow!r}, status={self.status!r}, events={len(self.events)})"

    def ingest_event(self, event: Event | EventRecord) -> bool:
        return super().ingest_event(masked_event(event, self.hidden) if self.hidden else event)

    def ingest_events(self, records: Sequence[EventRecord]) -> int:
        return super().ingest_events(masked_events(records, self.hidden))

    def ingest_status(self, doc: dict[str, Any]) -> bool:
        return super().ingest_status(masked_doc(doc, self.hidden))

    def ingest_timeline(self, entries: Sequence[Any]) -> int:
        return super().ingest_timeline([masked_doc(e if isinstance(e, dict) else {"raw": e}, self.hidden)
                                        for e in entries])

    def ingest_unreadable_metrics(self, items: Sequence[dict[str, Any]]) -> int:
        return super().ingest_unreadable_metrics([masked_doc(item, self.hidden) for item in items])

    # -- state ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the job is terminal and its history has been fully fetched (or following failed)."""
        return self._done.is_set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop this job's client works on (None until one uses it, and again after ``rebind``)."""
        task = self._task
        if task is not None and not task.done():
            return task.get_loop()
        return self._loop

    @property
    def unreachable_since(self) -> datetime | None:
        """Since when the backend has not answered this job's requests (``None`` while it answers): the
        CLI's "backend unreachable since HH:MM:SS" notice, and what a monitor panel can show."""
        return self.client.unreachable_since

    @property
    def follow_error(self) -> str | None:
        """Why following stopped before the job ended (the backend refused or vanished), else None."""
        return str(self._fatal) if self._fatal is not None else None

    def ending(self, *, timed_out: float | None = None) -> Ending:
        """How the job ended: its one stop reason, its estimate beside what it used, what it gained
        (``synth_nb.job.ending``); every door shows this. Read again only when something it reads changed: the
        results and the final block ask for it one after the other, and a long job's events are read whole."""
        linked = self.linked
        key = (timed_out, self.status, self.last_seq, len(self.events), len(self.metrics), self.status_doc,
               self.follow_error, self.estimate, self.cancelled_by,
               self.watchdog.stopped if self.watchdog is not None else None,
               (linked.status, len(linked.events), len(linked.metrics)) if linked is not None else None)
        if self._ending is None or self._ending[0] != key:
            self._ending = (key, ending_of(self, timed_out=timed_out))
        return self._ending[1]

    @property
    def stream_mode(self) -> str | None:
        """How events arrive: "sse" or "poll" (None before following starts)."""
        return self._monitor.stream_mode if self._monitor is not None else None

    def rebind(self, client: AsyncSynthClient) -> None:
        """Move this job, with its whole history, onto ``client`` and whichever loop next follows it.

        A monitor still running elsewhere is cancelled (thread-safely); the next ``wait()`` or
        ``start_monitoring()`` resumes after the last event seen. The old client stays open: it is the
        caller's to close.
        """
        task, self._task = self._task, None
        if task is not None and not task.done():
            call_on_loop(task.get_loop(), task.cancel)
        self.client = client
        self.hidden = searched((*self.hidden, *client.secret_values()))
        self._loop = None
        if self.linked is not None:
            self.linked.rebind(client)
        if self._fatal is not None:  # a failure of the old connection does not end the job
            self._fatal = None
            self._done.clear()

    def write_results(self) -> results.Results:
        """Write the job's result files (prompt learning: ``summary.md`` and its curve) and, for a job submitted
        from this folder, its bundle into ``<results_folder>/<job id>/``, once (a second call answers what the
        first did). The follow stage calls it when the job ends, whichever door follows it."""
        return results.write_results(self)

    def export_summary(self, folder: str | Path | None = None) -> Path:
        """Write the flow's result files (prompt learning: ``summary.md`` and its curve) into ``<folder>/<job id>/``
        (by default the job's own folder, where they are written when it ends), so exports of several jobs to
        one folder never overwrite each other."""
        flow = get_flow(self.flow)
        target = job_results_dir(self.id, Path(folder) if folder is not None else self.results_folder)
        written = results.write_files(self, target)
        if not written:
            which = ", ".join(f.label for f in all_flows() if f.has_summary) or "no"
            raise ConfigError(f"job {self.id} is a {flow.label} job, which has no summary to export "
                              f"(only {which} jobs write one)")
        return written[0]

    def to_html(self, path: str | Path | None = None) -> Path:
        """Write this job's self-contained HTML report (``synth_nb.job.report_html``), by default ``report.html``
        in its folder; any browser opens it with the network off."""
        from synth_nb.job.report_html import write_job_report  # why here: matplotlib and markdown-it, on use

        return write_job_report(self, path)

    def report_to(self, *targets: str, report_dir: str | Path = "runs", experiment: str | None = None) -> list[Reporter]:
        """Write this job to experiment trackers ("tensorboard", "mlflow"), then follow it (``synth_nb.report``)."""
        from synth_nb.report import report_to

        return report_to(self, targets, report_dir=report_dir, experiment=experiment)

    def explorer(self) -> Explorer:
        """Why the run won, from the events streamed so far (prompt learning: candidates, lineage, Pareto
        front, per-seed wins and prompt diffs). Works while the job runs and after ``--attach``."""
        flow = get_flow(self.flow)
        explorer = flow.explorer(self)
        if explorer is None:
            raise ConfigError(f"job {self.id} is a {flow.label} job, which has no explorer "
                              "(compare runs of any flow with synth_nb.compare)")
        return explorer

    def candidates_df(self, include_rejected: bool = False) -> Any:
        """The explorer's table (prompt learning: one row per candidate with parents, origin, scores, held-out
        score, length, rollouts); ``include_rejected`` adds every proposal the search did not keep, with why."""
        _require_pandas()
        explorer = self.explorer()
        return explorer.frame(include_rejected=True) if include_rejected else explorer.frame()

    # -- following ------------------------------------------------------------------------------

    def start_monitoring(self) -> asyncio.Task[None] | None:
        """Follow the job in a background task on the running loop (idempotent)."""
        task = self._task
        if self.done or (task is not None and not task.done()):
            return task
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._task = loop.create_task(self._follow(), name=f"synth-nb:{self.id}")
        return self._task

    async def wait(self, timeout: float | None = None) -> str:
        """Follow until terminal and fully drained; ``JobTimeoutError`` after ``timeout`` seconds."""
        if not self.done:
            self._check_open()
            self.start_monitoring()
        try:
            await asyncio.wait_for(self._done.wait(), timeout)
        except TimeoutError:
            raise JobTimeoutError(
                f"job {self.id} is still {self.status} after {timeout:g}s; it keeps running on the backend "
                f"(re-attach with: synth-nb attach {self.id})", job_id=self.id, status=self.status,
            ) from None
        if self._fatal is not None:
            raise self._fatal
        return self.status

    async def stop_monitoring(self) -> None:
        if self.linked is not None:
            await self.linked.stop_monitoring()
        task, self._task = self._task, None
        if task is None or task.done():
            return
        if task.get_loop() is not running_loop():
            call_on_loop(task.get_loop(), task.cancel)
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def cancel(self, timeout: float = 30.0, *, by: str = "this command") -> str:
        """Send the cancel request, then follow the job until the backend confirms a terminal state; ``by`` is
        who asked, said in the job's stop reason."""
        if self.done:
            return self.status
        self._check_open()
        self.cancelled_by = self.cancelled_by or by
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        doc = await send_cancel(self.client, self.endpoints, self.id, self.flow, deadline)
        if doc.get("status"):
            self.ingest_status(doc)

        async def read() -> str:
            self.ingest_status(await self.client.get_status(self.endpoints, self.id))
            return self.status

        await until_terminal(self.status, read, deadline)
        if self.terminal:
            if self._task is not None and not self._task.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._done.wait(), max(1.0, deadline - loop.time()))
            if not self.done:
                await self.stop_monitoring()
                await self.refresh()
        return self.status

    async def refresh(self) -> None:
        """One full sync: status, every event after the cursor, every metric (used by attach)."""
        self._check_open()
        self._loop = asyncio.get_running_loop()
        await self._new_monitor().refresh()
        if self.terminal:
            self._finish()

    async def updates(self) -> AsyncIterator[JobUpdate]:
        """History first (status, events, metrics), then live updates until ``done``."""
        history = self.history_updates()
        finished = self.done
        queue = None if finished else self._subscribe()
        if not finished:
            with contextlib.suppress(RuntimeError):
                self.start_monitoring()
        try:
            for update in history:
                yield update
            if queue is None:
                yield JobUpdate("done", self.status)
                return
            while True:
                update = await queue.get()
                yield update
                if update.kind == "done":
                    return
        finally:
            if queue is not None:
                self._unsubscribe(queue)

    # -- internals ------------------------------------------------------------------------------

    def _new_monitor(self) -> JobMonitor:
        options = PollSettings(poll_interval=self.poll_interval, min_interval=self.min_interval,
                                use_sse=self.use_sse, metrics_limit=self.metrics_limit)
        return JobMonitor(self, self.client, self.endpoints, options,
                          linked=self._follow_linked if self._follows_links else None)

    async def _follow_linked(self, linked_id: str) -> None:
        """Attach to the job this one's status names as linked and follow it alongside (synth-ai 0.2.24
        polls its events too); once this job has ended, bring the linked one up to date. The linked job is
        secondary: a transient failure is retried after the next status read, any other is noted."""
        if self.linked_note is not None and self.linked_note["job_id"] == linked_id:
            if self.terminal and self.linked is not None and not self.linked.done:
                with contextlib.suppress(*TRANSIENT_ERRORS):
                    await self.linked.refresh()
            return
        flows = {name: get_flow(name).endpoints for name in guess_flow(linked_id)}
        try:
            flow, doc = await find_job(linked_id, self.client, flows, kind_of=flow_named_in)
            named = doc.get("algorithm")
            linked = Job(linked_id, flow, self.client, endpoints=flows[flow],
                         algorithm=named.lower() if isinstance(named, str) else None,
                         backend_url=self.backend_url, poll_interval=self.poll_interval,
                         min_interval=self.min_interval, use_sse=self.use_sse, hidden=self.hidden)
            linked._follows_links = False  # one level: a training job naming its RL job back is not followed
            await linked.refresh()
        except TRANSIENT_ERRORS:
            return
        except SynthNbError as exc:
            self.linked, self.linked_note = None, masked_doc({"job_id": linked_id, "error": str(exc)}, self.hidden)
        else:
            self.linked, self.linked_note = linked, {"job_id": linked_id, "flow": flow}
            if not linked.done:
                linked.start_monitoring()
        self._publish(JobUpdate("linked", self.status, entry=self.linked_note))

    async def _follow(self) -> None:
        client, self._monitor = self.client, self._new_monitor()
        try:
            await self._monitor.run()
        except Exception as exc:  # AuthError, NotFoundError...: stop following, surface in wait()
            if self.client is not client:
                return  # rebound meanwhile: the old connection's failure is not the job's
            self._fatal = self._closed_error() if isinstance(exc, ClientClosedError) else exc
        self._finish()

    def _finish(self) -> None:
        if self._done.is_set():
            return
        self._done.set()
        if self.registry is not None:
            stopped = self.ending().stop.text if self.terminal else None
            with contextlib.suppress(OSError, SynthNbError):
                self.registry.update(self.id, last_seq=self.last_seq, status=self.status,
                                     **({"stop_reason": stopped} if stopped else {}))
        self._publish(JobUpdate("done", self.status))

    def _check_open(self) -> None:
        if self.client.closed:
            raise self._closed_error()

    def _closed_error(self) -> ClientClosedError:
        return ClientClosedError(job_id=self.id, base_url=self.backend_url)

