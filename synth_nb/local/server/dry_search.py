"""Part of ``POST /dry-rollout`` for a small prompt search: the whole search, run once and timed.

A prompt search the embedded backend runs for a bundled example takes about half a second, less than the
dry proposal the check runs for it. Its wall time is then poorly told from that proposal's batches: the
search's later prompts reuse the phrases of its earlier ones (the offline policy embeds each phrase once),
and the search engine's own work before and between batches (gepa's Pareto bookkeeping, optuna's sampler,
the job's events) is a fair share of a half-second job. So when the job's rollouts (``rollouts``: the
client's count, from its plan) at the dry proposal's warm pace (``pace``: seconds per rollout) come to no
more than ``SMALL_S``, the check runs the job's own executor once, in full, with a ``DryContext``: no job is
created, nothing is kept (its events go to a scratch store, as a job's go to the backend's, and are removed
with it), and the policy forgets what it embedded on the way
(``policies.new_texts_forgotten``), so the job that follows pays for its new prompts as this run did. The
run's span is the job's wall time on this machine now, as its ``started_at`` to ``finished_at`` will be,
and the tokens its usage report counts are the job's (the search and the offline policy are deterministic
for a config's seeds).

A larger search is not rehearsed: the check would take as long as the job; nor is one that calls a model
beyond this process (a policy or proposer model: the check would spend what the job spends, and wait as
long); their estimate is made from the dry proposal's pace. A rehearsal that outlasts ``LIMIT_S`` (a machine much busier than when the pace was measured) is
stopped, and the estimate is made from the pace too.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from synth_nb.local.errors import ExecutorInputError, ExecutorUnavailable
from synth_nb.local.executors import choose_executor, load_executor
from synth_nb.local.policies import new_texts_forgotten
from synth_nb.local.runner import JobRunner
from synth_nb.local.server.dry_context import DryContext
from synth_nb.local.storage import Storage

__all__ = ["LIMIT_S", "SEARCHES", "SMALL_S", "rehearse"]

#: a search rehearsed runs in at most this many seconds at the dry proposal's pace
SMALL_S = 3.0
#: a rehearsal is stopped past this many seconds (the search's own estimate is then made from its pace)
LIMIT_S = 10.0
#: the executors a rehearsal runs: the searches themselves (a backend that replays recorded jobs has none)
SEARCHES = frozenset({"gepa", "mipro"})


def rehearse(runner: JobRunner, body: dict[str, Any], key: str | None, *, rollouts: int, pace: float,
             calls_out: str | None = None, default_executor: str | None = None) -> dict[str, Any]:
    """Run the job's search once in full and time it: ``seconds`` (the executor's span), ``cpu_seconds``
    (this process's, the task app's included when the backend serves it), the ``events`` it wrote, and the
    ``tokens`` and ``rollouts`` (held-out included) its usage report counted, as the job's report counts them; or
    ``skipped`` / ``stopped`` saying why there is no figure. ``calls_out`` names a model the search calls
    beyond this process (its policy or proposer): such a search is not run whole."""
    if calls_out is not None:
        return {"skipped": f"the job calls {calls_out}, and the check does not make all of its calls"}
    if rollouts * pace > SMALL_S:
        return {"skipped": f"the job's {rollouts:,} rollouts take more than {SMALL_S:.0f} s at the dry pace"}
    try:
        name = choose_executor("prompt_learning", body, default_executor)
        if name not in SEARCHES:
            return {"skipped": f"this backend runs the job with its {name!r} executor, not a search"}
        executor = load_executor(name)
    except (ExecutorInputError, ExecutorUnavailable) as exc:
        return {"skipped": str(exc)}
    folder = Path(tempfile.mkdtemp(prefix="synth-nb-rehearsal-"))
    store = Storage(folder / "store")
    (folder / "work").mkdir()
    ctx = DryContext(runner, "prompt_learning", body, folder / "work", {}, key, store)
    limit = threading.Timer(LIMIT_S, ctx.cancelled.set)
    try:
        with new_texts_forgotten():
            limit.start()
            started, cpu = time.perf_counter(), time.process_time()
            try:
                executor.run(ctx)
            except Exception as exc:  # the job would fail the same way; the check says so, not this figure
                return {"stopped": f"the rehearsal failed: {type(exc).__name__}: {exc}"}
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        limit.cancel()
        runner.policies.remove_job(ctx.job_id)
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
    if ctx.cancelled.is_set():
        return {"stopped": f"the rehearsal took longer than {LIMIT_S:.0f} s and was stopped"}
    report = ctx.first("prompt.learning.completed")  # the job's own usage report, counted as the job counts
    done = report[1] if report is not None else {}
    counted = {"tokens": done.get("token_count_total"),
               "rollouts": _sum(done.get("rollouts_completed"), done.get("heldout_rollouts"))}
    return {"seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4), "events": len(ctx.events),
            **{figure: value for figure, value in counted.items() if isinstance(value, int)}}


def _sum(*values: object) -> int | None:
    """The sum of integer counts, or None when one is missing."""
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(counts) if len(counts) == len(values) else None
