"""What a finished RL job shows: a headline (reward at the start and at the end, eval reward, the model or
the checkpoint), then the full status document folded away.

The reward figures come from the backend's own summary when it reports one (the local backend's ``rl``
block, averaged over a few steps at each end), else from the job's reward metrics, so both backends get
a headline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.artifacts import Artifact, FinishedJob, status_artifact
from synth_nb.flows.chart import ChartData, number
from synth_nb.flows.rl.chart import CHART

__all__ = ["reward_facts", "rl_artifact"]


def _ends(data: ChartData, key: str) -> tuple[float, float, int, float] | None:
    """(first, last, last step, best) of one series, or None when it has no point."""
    x, y = data.series[key].xy()
    if len(y) == 0:
        return None
    return float(y[0]), float(y[-1]), int(x[-1]), float(y.max())


def _summary_block(job: FinishedJob) -> Mapping[str, Any]:
    """The backend's own training summary (``rl`` in the status document or its ``result``), or {}."""
    doc = job.status_doc or {}
    result = doc.get("result")
    for source in (doc, result if isinstance(result, Mapping) else {}):
        block = source.get("rl")
        if isinstance(block, Mapping):
            return block
    return {}


def reward_facts(job: FinishedJob) -> list[str]:
    """"reward 0.18 → 0.60 over 40 steps", "eval reward 0.20 → 0.55 (best 0.58)", from the summary or metrics."""
    block = _summary_block(job)
    data = ChartData(CHART)
    data.extend(job.metrics, ())
    train, evaluation = _ends(data, "train"), _ends(data, "eval")
    start = number(block.get("reward_start"), train[0] if train else None)
    end = number(block.get("reward_end"), train[1] if train else None)
    steps = number(block.get("steps"), train[2] if train else None)
    facts: list[str] = []
    if start is not None and end is not None:
        over = f" over {steps:g} step{'s' if steps != 1 else ''}" if steps else ""
        facts.append(f"reward {start:.2f} → {end:.2f}{over}")
    eval_start = number(block.get("eval_reward_start"), evaluation[0] if evaluation else None)
    eval_end = number(block.get("eval_reward_end"), evaluation[1] if evaluation else None)
    eval_best = number(block.get("eval_reward_best"), evaluation[3] if evaluation else None)
    if eval_start is not None and eval_end is not None:
        best = f" (best {eval_best:.2f})" if eval_best is not None and eval_best > max(eval_start, eval_end) else ""
        facts.append(f"eval reward {eval_start:.2f} → {eval_end:.2f}{best}")
    return facts


def rl_artifact(job: FinishedJob) -> Artifact:
    facts = reward_facts(job)
    model = (job.status_doc or {}).get("fine_tuned_model")
    if isinstance(model, str) and model and job.status == "succeeded":
        facts.append(f"model {model}")
    if not facts:
        facts.append("the backend reported no reward")
    artifact = status_artifact(job, facts)
    return Artifact(title=f"RL result: {job.id} ({job.status})", document=artifact.document, facts=artifact.facts)
