"""A client-side budget watchdog: cancel a job when it crosses a limit, and say exactly which one.

Limits (any flow): wall minutes since watching began (``--max-minutes``), rollouts and tokens as the
backend reports them in events or the status document (``--max-rollouts``, ``--max-tokens``), and
evaluations without a new best score (``--stop-on-plateau N``; the evaluations are the points of the
flow's chart series that is scored last, e.g. prompt-learning trials, RL eval reward, SFT validation loss).
When one is crossed the job is cancelled; nothing is deleted, so the best checkpoint or prompt the backend
reports stays available, and ``report()`` names it. ``meters()`` is the state a "budget left" meter shows
(the limits and a meter's reading are ``synth_nb.job.budget``'s).

``--max-rollouts`` also travels in a prompt-learning job's body, and a backend that reads it stops at the
limit by itself (ending "budget_exhausted"): then the watchdog cancels nothing and ``report()`` says the
backend stopped there. It cancels only a job that goes past the limit (a backend that ignores the field).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from synth_nb.errors import SynthNbError
from synth_nb.job.budget import Limits, Meter
from synth_nb.job.history import JobUpdate, call_on_loop
from synth_nb.job.view import JobView
from synth_nb.records import TERMINAL_STATUSES, Event

if TYPE_CHECKING:
    from synth_nb.flows.chart import ChartData

__all__ = ["WatchedJob", "Watchdog", "watch"]

#: absolute counts a backend reports (events' data or the status document), newest wins
_ROLLOUT_KEYS = ("rollouts_completed", "rollouts_used", "total_rollouts")
_TOKEN_KEYS = ("rollout_tokens_used", "tokens_used", "total_tokens_used", "trained_tokens", "tokens_seen")
#: the rollout budget a backend says it works to
_ROLLOUT_TOTAL_KEYS = ("rollouts_total", "rollout_budget", "max_rollouts")
#: what a backend reports as the result worth keeping
_BEST_KEYS = ("best_score", "best_prompt", "fine_tuned_model", "best_checkpoint", "checkpoint", "model_id")


class WatchedJob(JobView, Protocol):
    """A job the watchdog can follow (``Job``): it reads the job and asks it to cancel, nothing else."""

    watchdog: Watchdog | None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class Watchdog:
    """Watches one job from ``start()`` on; cancels it (once) when a limit is crossed."""

    def __init__(self, job: WatchedJob, limits: Limits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.job = job
        self.limits = limits
        self._clock = clock
        self._started: float | None = None
        #: when the job ended: the time used stops there (a saved panel shows what the job took)
        self._ended: float | None = None
        self._rollouts: float | None = None
        self._step_rollouts = 0.0
        self._tokens: float | None = None
        #: the rollout budget the backend reports working to, and why it says the job ended
        self._rollouts_total: float | None = None
        self._finish_reason: str | None = None
        self._chart: ChartData | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self.tripped: Meter | None = None
        #: what the cancel request came to ("cancelled", or why it could not be)
        self.outcome: str | None = None
        self._cancel_pending = False
        #: the evaluations scored when ``--stop-on-plateau`` stopped the job (those after it are said apart)
        self._plateau_seen: int | None = None

    # -- state ------------------------------------------------------------------------------------

    def meters(self) -> list[Meter]:
        """Every limit asked for, with what is used and left (what a "budget left" meter shows)."""
        out, lim = [], self.limits
        if lim.max_minutes is not None:
            used = None if self._started is None else ((self._ended or self._clock()) - self._started) / 60
            out.append(Meter("minutes", "--max-minutes", lim.max_minutes, used, "minutes"))
        if lim.max_rollouts is not None:
            rollouts = self._rollouts if self._rollouts is not None else (self._step_rollouts or None)
            out.append(Meter("rollouts", "--max-rollouts", lim.max_rollouts, rollouts, "rollouts"))
        if lim.max_tokens is not None:
            out.append(Meter("tokens", "--max-tokens", lim.max_tokens, self._tokens, "tokens"))
        if lim.stop_on_plateau is not None:
            out.append(Meter("plateau", "--stop-on-plateau", lim.stop_on_plateau, self._since_best(),
                             "evaluations without a new best"))
        return out

    def _tripped_now(self) -> Meter | None:
        """The limit that stopped the job, with what the job has used by now: rollouts already running
        when the cancel was sent still finish and count, and every report must give the job's own total."""
        if self.tripped is None:
            return self.backend_stopped
        if self.tripped.name == "plateau":  # the count that stopped it; evaluations after it are said apart
            return self.tripped
        return next((m for m in self.meters() if m.flag == self.tripped.flag and m.used is not None), self.tripped)

    def after_stop(self) -> str:
        """The evaluations scored after ``--stop-on-plateau`` sent the cancel (a fast backend scores a few more
        while the request travels); empty when none were, or another limit stopped the job."""
        if self.tripped is None or self.tripped.name != "plateau" or self._plateau_seen is None:
            return ""
        series = self._series()
        more = (len(series.xy()[1]) if series is not None else 0) - self._plateau_seen
        return f"{more} more evaluation{'s' * (more != 1)} finished while the cancel was on its way" if more > 0 else ""

    @property
    def backend_stopped(self) -> Meter | None:
        """The rollout limit when the backend itself ended the job at it (the limit was in the job's body):
        the job is over, says its budget ran out, and that budget is the limit asked for."""
        if self.tripped is not None or self.job.status not in TERMINAL_STATUSES:
            return None
        if self._finish_reason != "budget_exhausted" or self.limits.max_rollouts is None:
            return None
        total = self._rollouts_total
        meter = next((m for m in self.meters() if m.name == "rollouts"), None)
        if meter is None or meter.used is None:
            return None
        at_limit = total == meter.limit if total is not None else meter.crossed
        return meter if at_limit else None

    @property
    def stopped(self) -> Meter | None:
        """The limit that ended the job: the one the watchdog cancelled at, or the one the backend stopped at."""
        return self._tripped_now()

    def stopped_by(self) -> dict[str, Any] | None:
        """The limit that stopped the job, as data (kept in its bundle), or None."""
        meter = self._tripped_now()
        if meter is None:
            return None
        if self.tripped is None:
            return {"limit": meter.flag, "value": meter.limit, "used": meter.used, "unit": meter.unit,
                    "used_when_stopped": meter.used, "by": "backend", "cancel": None, "best": self.best()}
        return {"limit": meter.flag, "value": meter.limit, "used": meter.used, "unit": meter.unit,
                "used_when_stopped": self.tripped.used, "by": "watchdog", "cancel": self._outcome(),
                "after_stop": self.after_stop() or None, "best": self.best()}

    def _outcome(self) -> str:
        if self.outcome is not None:
            return self.outcome
        return self.job.status if self.job.status in TERMINAL_STATUSES else "requested"

    def best(self) -> dict[str, Any]:
        """What the backend reports as worth keeping, else the best value the chart saw."""
        doc = self.job.status_doc or {}
        kept = {k: doc[k] for k in _BEST_KEYS if doc.get(k) not in (None, "", {}, [])}
        if kept or self._chart is None:
            return kept
        series = self._series()
        if series is None:
            return {}
        x, y = series.xy()
        if not len(y):
            return {}
        i = int(y.argmax() if series.spec.higher_is_better else y.argmin())
        return {"best_seen": {"series": series.spec.label, "value": float(y[i]), "step": int(x[i])}}

    def report(self) -> str:
        """One sentence: which limit stopped the job and what was kept (empty when none did)."""
        meter = self._tripped_now()
        if meter is None:
            return ""
        best = self.best()
        if "best_prompt" in best or "best_score" in best:
            kept = (f"the best prompt the backend reports is kept (best_score {best.get('best_score')}); "
                    "see the status document or the bundle")
        elif any(k in best for k in ("fine_tuned_model", "best_checkpoint", "checkpoint", "model_id")):
            name = next(str(best[k]) for k in ("fine_tuned_model", "best_checkpoint", "checkpoint", "model_id")
                        if k in best)
            kept = f"the backend keeps {name}"
        elif "best_seen" in best:
            seen = best["best_seen"]
            kept = (f"the backend reports no best checkpoint or prompt; the best {seen['series']} seen was "
                    f"{seen['value']:.4g} at step {seen['step']}")
        else:
            kept = "the backend reports no best checkpoint or prompt"
        used = meter.amount(meter.used) if meter.used is not None else "?"
        unit = "" if meter.name == "minutes" else f" {meter.unit}"
        how = (f"cancel: {self._outcome()}" if self.tripped is not None
               else f"the backend ended the search at the limit ({self._finish_reason})")
        after = self.after_stop()
        return (f"stopped by {meter.flag} {meter.limit:g}: {used}{unit} (limit {meter.amount(meter.limit)}); {how}; "
                + (f"{after}; " if after else "") + kept)

    # -- watching ----------------------------------------------------------------------------------

    def start(self) -> Watchdog:
        """Count what the job already holds, then every update; the time limit runs from now."""
        from synth_nb.flows import get_flow
        from synth_nb.flows.chart import ChartData

        self._started = self._clock()
        self._chart = ChartData(get_flow(self.job.flow).chart)  # plateaus, and the best seen when stopped
        self._chart.extend(self.job.metrics, self.job.events)
        for event in self.job.events:
            self._count(event)
        self._count_doc(self.job.status_doc or {})
        self.job.watchdog = self
        self.job.add_listener(self._on_update)
        if self.limits.max_minutes is not None and not self.job.done:
            self._timer = threading.Timer(self.limits.max_minutes * 60, self._check)
            self._timer.daemon = True
            self._timer.start()
        self._check()
        return self

    def _on_update(self, update: JobUpdate) -> None:
        if update.kind == "done":
            self._ended = self._clock()
            if self._timer is not None:
                self._timer.cancel()
            return
        if update.kind == "event" and update.event is not None:
            self._count(update.event)
            if self._chart is not None:
                self._chart.add_event(update.event)
        elif update.kind == "metric" and update.metric is not None and self._chart is not None:
            self._chart.add_metric(update.metric)
        elif update.kind == "status":
            self._count_doc(self.job.status_doc or {})
        self._check()

    def _count(self, event: Event) -> None:
        data = event.data or {}
        rollouts = next((v for k in _ROLLOUT_KEYS if (v := _number(data.get(k))) is not None), None)
        if rollouts is not None:
            self._rollouts = max(self._rollouts or 0.0, rollouts)
        elif event.type.endswith(".train.step") and _number(data.get("rollouts")) is not None:
            self._step_rollouts += float(data["rollouts"])
        tokens = next((v for k in _TOKEN_KEYS if (v := _number(data.get(k))) is not None), None)
        if tokens is not None:
            self._tokens = max(self._tokens or 0.0, tokens)
        total = next((v for k in _ROLLOUT_TOTAL_KEYS if (v := _number(data.get(k))) is not None), None)
        if total is not None:
            self._rollouts_total = total
        if isinstance(data.get("finish_reason"), str):
            self._finish_reason = data["finish_reason"]

    def _count_doc(self, doc: Mapping[str, Any]) -> None:
        self._count(Event(seq=0, type="status", data=dict(doc)))

    def _series(self) -> Any:
        """The series a plateau is judged on: the last one (not a running best) that has points."""
        if self._chart is None:
            return None
        candidates = [b for b in self._chart.series.values() if b.spec.best_of is None and len(b.xy()[1])]
        return candidates[-1] if candidates else None

    def _since_best(self) -> float | None:
        series = self._series()
        if series is None:
            return None
        y = series.xy()[1]
        best = y.argmax() if series.spec.higher_is_better else y.argmin()  # first occurrence of the best
        return float(len(y) - 1 - int(best))

    def _check(self) -> None:
        if self.tripped is not None:
            if self._cancel_pending:
                self._request_cancel()
            return
        if self.job.status in TERMINAL_STATUSES:
            return
        crossed = next((m for m in self.meters() if m.trips), None)
        if crossed is None:
            return
        with self._lock:
            if self.tripped is not None:
                return
            self.tripped = crossed
            series = self._series() if crossed.name == "plateau" else None
            self._plateau_seen = len(series.xy()[1]) if series is not None else None
        if self._timer is not None:
            self._timer.cancel()
        self._request_cancel()

    def _request_cancel(self) -> None:
        """Cancel on the loop the job's client works on (from a listener, or the timer's thread)."""
        loop = self.job.loop
        if loop is None or loop.is_closed():
            self._cancel_pending = True  # asked again with the next update, on whatever loop follows the job
            return
        self._cancel_pending = False
        call_on_loop(loop, lambda: loop.create_task(self._cancel(), name=f"synth-nb:watchdog:{self.job.id}"))

    async def _cancel(self) -> None:
        try:
            flag = self.tripped.flag if self.tripped is not None else "a limit"
            self.outcome = await self.job.cancel(by=f"the watchdog ({flag})")
        except SynthNbError as exc:
            self.outcome = f"not possible ({exc})"
        except asyncio.CancelledError:
            self.outcome = "interrupted"
            raise


def watch(job: WatchedJob, limits: Limits) -> Watchdog | None:
    """Start a watchdog on ``job`` when any limit is set (the one already watching it is kept)."""
    if not limits.any:
        return None
    if job.watchdog is not None:
        return job.watchdog
    return Watchdog(job, limits).start()
