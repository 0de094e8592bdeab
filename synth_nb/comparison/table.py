"""The comparison's tables: each run's headline metric, duration, rollouts and tokens; config differences.

A run's headline metric is the first series of its flow's chart (prompt-learning score, SFT train loss,
RL mean reward), so runs of different flows sit in one table, each with its own metric named. Each score
column is one measure, beside what it was measured on: the best during the run is the headline metric on the
data the run itself scores (a prompt search's validation seeds, the training batches); the result after the
run is measured on held-out data (the test pool, the evaluation seeds, the validation split), never mixed with
the other. The config differences are those of what was sent (the submitted plan, flags and overrides
included) when every run of a flow has one, else of the config files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth_nb.comparison.curves import Curve, rollout_total
from synth_nb.comparison.runs import Run
from synth_nb.job.progress import parse_time

__all__ = ["MISSING", "OTHER_FLOW", "config_differences", "run_row", "shown_value", "tokens_of"]

MISSING = "—"
OTHER_FLOW = "·"
#: event data keys that report tokens used in all, most inclusive first
_TOKEN_KEYS = ("token_count_total", "total_tokens", "tokens", "policy_tokens", "rollout_tokens_used")


def _duration(run: Run) -> float | None:
    doc = run.status_doc
    start = parse_time(doc.get("started_at")) or parse_time(doc.get("created_at"))
    end = parse_time(doc.get("finished_at"))
    if start is None or end is None:
        times = [t for t in (parse_time(e.created_at) for e in run.events) if t is not None]
        start, end = (min(times), max(times)) if times else (None, None)
    return None if start is None or end is None else max(0.0, end - start)


def tokens_of(run: Run) -> int | None:
    """Tokens the run reported, from its newest event that says (prompt learning's completion, SFT's finish)."""
    for event in reversed(run.events):
        data = event.data or {}
        for key in _TOKEN_KEYS:
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def run_row(run: Run, curves: Sequence[Curve]) -> dict[str, Any]:
    """One row of the final-metrics table."""
    own = [c for c in curves if c.run is run]
    head = own[0] if own else None
    during = next((g for g in run.gains if not g.held_out), None)
    after = next((g for g in run.gains if g.held_out), None)
    row: dict[str, Any] = {
        "run": run.label, "job_id": run.job_id, "flow": run.flow_label, "status": run.status,
        "stopped": run.stopped or None,
        "metric": head.headline if head else None, "final": head.final() if head else None,
        "best": head.best_value() if head else None, "best_on": during.measured_on if during else None,
        "held_out": after.result if after else None,
        "held_out_on": f"{after.measure} on {after.measured_on}" if after else None,
        "steps": int(max(head.raw.steps)) if head and head.raw.steps else None,
        "rollouts": rollout_total(run), "tokens": tokens_of(run), "duration_s": _duration(run),
    }
    for curve in own[1:]:
        row[f"{curve.label} (final)"] = curve.final()
    return row


def compared_keys(run: Run, group: Sequence[Run]) -> dict[str, Any]:
    """What ``run`` is compared by: its submitted plan when every run of its flow in ``group`` has one, else its
    config file (or the backend's copy)."""
    return run.sent if all(r.sent for r in group if r.flow == run.flow) else run.config


def config_differences(runs: Sequence[Run]) -> list[tuple[str, list[Any]]]:
    """Dotted keys whose values differ between runs of the same flow, in what was sent (``compared_keys``: a
    flag such as ``--rollout-budget`` included); a key a run lacks shows as ``MISSING``; runs of another flow
    show ``OTHER_FLOW``: an SFT and a GEPA config share no keys."""
    out: dict[str, list[Any]] = {}
    for flow in dict.fromkeys(r.flow for r in runs):
        group = [r for r in runs if r.flow == flow and compared_keys(r, runs)]
        if len(group) < 2:
            continue
        keys = {r.job_id: compared_keys(r, runs) for r in group}
        for key in sorted({k for r in group for k in keys[r.job_id]}):
            if len({_comparable(keys[r.job_id].get(key, MISSING)) for r in group}) > 1:
                row = out.setdefault(key, [OTHER_FLOW] * len(runs))
                for i, r in enumerate(runs):
                    if r.flow == flow:
                        row[i] = keys[r.job_id].get(key, MISSING) if r.job_id in keys else MISSING
    return sorted(out.items())


def _comparable(value: Any) -> str:
    return repr(value) if not isinstance(value, Mapping) else repr(sorted(value.items()))


def shown_value(value: Any, limit: int = 60) -> str:
    """A config value for a table cell: long lists summarised, long text cut."""
    if isinstance(value, list | tuple) and len(value) > 8:
        text = f"[{', '.join(map(str, value[:3]))}, … {len(value)} items]"
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
