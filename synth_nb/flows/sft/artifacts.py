"""What a finished SFT job shows: the fine-tuned model id and the files it trained on."""

from __future__ import annotations

from synth_nb.flows.artifacts import Artifact, FinishedJob

__all__ = ["fine_tuned_model", "sft_artifact", "training_files"]


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


def training_files(job: FinishedJob) -> list[tuple[str, str]]:
    """(role, file id) pairs of the files the job trained on, as the status document names them."""
    doc = job.status_doc or {}
    found: list[tuple[str, str]] = []
    for role in ("training_file", "validation_file"):
        for key in (role, f"{role}_id"):
            value = doc.get(key)
            if isinstance(value, str) and value and (role, value) not in found:
                found.append((role, value))
    return found


def sft_artifact(job: FinishedJob) -> Artifact:
    model = fine_tuned_model(job)
    rows = [f"| {role} | `{name}` |" for role, name in training_files(job)]
    md = [f"### SFT result: `{job.id}` ({job.status})", "",
          f"**Model id:** `{model}`" if model else "**Model id:** not reported by the backend", ""]
    if rows:
        md += ["| file | id / name |", "|---|---|", *rows]
    return Artifact(title=f"SFT result: {job.id}", markdown="\n".join(md))
