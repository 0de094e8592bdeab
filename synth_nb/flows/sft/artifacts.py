"""What a finished SFT job shows: the fine-tuned model id (or where a stopped job kept its checkpoint), the
loss at the start and at the end, and the files it trained and validated on. What the backend named (the
model, the files, an error) is written into the Markdown as literal text (``synth_nb.markup``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.artifacts import Artifact, FinishedJob, ending_facts
from synth_nb.flows.chart import ChartData
from synth_nb.flows.sft.chart import CHART
from synth_nb.markup import md_code, md_text

__all__ = ["fine_tuned_model", "loss_fact", "sft_artifact", "training_files"]

_ROLES = (("training", "training_file"), ("validation", "validation_file"))


def fine_tuned_model(job: FinishedJob) -> str | None:
    """The result model id from the status document, else from the newest event that names it."""
    doc = job.status_doc or {}
    for source in (doc, doc.get("result") or {}, doc.get("data") or {}):
        for key in ("fine_tuned_model", "model_id", "output_model"):
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, str) and value:
                return value
    for event in reversed(job.events):
        value = (event.data or {}).get("fine_tuned_model")
        if isinstance(value, str) and value:
            return value
    return None


def _nested(doc: Mapping[str, Any], *keys: str) -> Any:
    node: Any = doc
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _validation_from_config(doc: Mapping[str, Any]) -> str | None:
    """The validation file id where the CLI puts it: ``metadata.effective_config.data.validation_files``."""
    files = _nested(doc, "metadata", "effective_config", "data", "validation_files") or doc.get("validation_files")
    first = files[0] if isinstance(files, list) and files else None
    return first if isinstance(first, str) and first else None


def training_files(job: FinishedJob) -> list[tuple[str, str]]:
    """(role, file id) of the files the job trained and validated on, as the status document names them."""
    doc = job.status_doc or {}
    found: list[tuple[str, str]] = []
    for role, key in _ROLES:
        values = [doc.get(key), doc.get(f"{key}_id")]
        if role == "validation":
            values.append(_validation_from_config(doc))
        value = next((v for v in values if isinstance(v, str) and v), None)
        if value is not None:
            found.append((role, value))
    return found


def _example_counts(job: FinishedJob) -> dict[str, int]:
    """Examples per role, from the backend's data check (``sft.data.validated``, sent before training)."""
    for event in job.events[:200]:
        if event.type != "sft.data.validated":
            continue
        data = event.data or {}
        return {role: int(data[key]) for role, key in (("training", "n_train"), ("validation", "n_validation"))
                if isinstance(data.get(key), int)}
    return {}


def loss_fact(job: FinishedJob) -> str | None:
    """"train loss 2.10 → 0.54 over 120 steps; validation loss 0.61", from the job's loss metrics."""
    data = ChartData(CHART)
    data.extend(job.metrics, ())
    x, y = data.series["train"].xy()
    if len(y) == 0:
        return None
    steps = int(x[-1])
    text = f"train loss {y[0]:.2f} → {y[-1]:.2f} over {steps} step{'s' if steps != 1 else ''}"
    _, val = data.series["validation"].xy()
    return text + (f"; validation loss {val[-1]:.2f}" if len(val) else "")


def sft_artifact(job: FinishedJob) -> Artifact:
    model = fine_tuned_model(job) if job.status == "succeeded" else None
    facts = [f for f in (loss_fact(job), *ending_facts(job)) if f]
    md = [f"### SFT result: {md_code(job.id)} ({md_text(job.status)})", ""]
    if job.status == "succeeded":
        md += [f"**Model id:** {md_code(model)}" if model else "**Model id:** not reported by the backend", ""]
    md += [f"- {md_text(fact)}" for fact in facts]
    files = training_files(job)
    if files:
        counts = _example_counts(job)
        md += ["", "| file | id | examples |", "|---|---|---|",
               *[f"| {role} | {md_code(name, cell=True)} | {counts.get(role, '')} |" for role, name in files]]
    return Artifact(title=f"SFT result: {job.id}", markdown="\n".join(md).rstrip() + "\n", facts=tuple(facts))
