"""What a finished job leaves in the notebook: the prompt-learning summary (and its export), the SFT
files and model id, the RL final status JSON (pretty-printed and downloadable).

Every bundle carries ``text/markdown`` or ``text/html`` plus ``text/plain`` so nbconvert, GitHub and
VS Code render something readable. Status documents pass through ``mask_payload`` first: a backend
that echoes a key back must not get it saved into the notebook.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from synth_nb.plan import mask_payload

__all__ = [
    "artifact_bundle",
    "export_status",
    "export_summary",
    "fine_tuned_model",
    "prompt_learning_summary",
    "sft_files",
    "status_json",
]

SUMMARY_NAME = "summary.md"


def prompt_learning_summary(job: Any) -> tuple[str, bytes | None]:
    """(Markdown, curve PNG or None) from ``synth_nb.summary.prompt_learning.render_summary``.

    Falls back to a short status-only summary when that renderer is not installed.
    """
    try:
        from synth_nb.summary.prompt_learning import render_summary
    except ImportError:
        return _minimal_summary(job), None
    summary = render_summary(job.status_doc or {}, list(job.events), list(job.metrics), job_id=str(job.id))
    return summary.markdown, summary.curve_png


def _minimal_summary(job: Any) -> str:
    doc = job.status_doc or {}
    best = doc.get("best_score")
    lines = [f"# Prompt learning job `{job.id}`", "", f"- status: **{job.status}**"]
    if isinstance(best, int | float):
        lines.append(f"- best score: {best:.4f}")
    lines.append(f"- events: {len(job.events)}, metric points: {len(job.metrics)}")
    return "\n".join(lines) + "\n"


def _summary_paths(job: Any, path: str | Path | None) -> tuple[Path, Path]:
    target = Path(path) if path is not None else Path.cwd()
    md = target if target.suffix.lower() == ".md" else target / SUMMARY_NAME
    return md, md.with_name(f"{md.stem}_curve.png")


def export_summary(job: Any, path: str | Path | None = None, *, chart_png: bytes | None = None) -> list[Path]:
    """Write the prompt-learning summary Markdown and its curve PNG; returns the files written.

    ``path`` is a folder (default: the current directory, which is the notebook's folder in Jupyter) or
    a ``.md`` file; the curve goes next to it as ``<name>_curve.png``. ``chart_png`` (the panel's last
    chart) is used when the summary has no curve of its own.
    """
    markdown, curve = prompt_learning_summary(job)
    md_path, png_path = _summary_paths(job, path)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    written = [md_path]
    png = curve or chart_png
    if png:
        png_path.write_bytes(png)
        written.append(png_path)
        if png_path.name not in markdown:
            markdown = markdown.rstrip() + f"\n\n![optimisation curve]({png_path.name})\n"
    md_path.write_text(markdown, encoding="utf-8")
    return written


def status_json(job: Any) -> str:
    """The final status document, masked and pretty-printed."""
    return json.dumps(mask_payload(dict(job.status_doc or {})), indent=2, sort_keys=True, default=str)


def export_status(job: Any, path: str | Path) -> Path:
    """Write the masked final status JSON (the RL artifact) to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(status_json(job) + "\n", encoding="utf-8")
    return out


def fine_tuned_model(job: Any) -> str | None:
    """The SFT result model id from the status document, else from the newest event that names it."""
    doc = job.status_doc or {}
    for source in (doc, doc.get("result") or {}, doc.get("data") or {}):
        for key in ("fine_tuned_model", "model_id", "output_model"):
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, str) and value:
                return value
    for event in reversed(list(job.events)):
        value = (getattr(event, "data", None) or {}).get("fine_tuned_model")
        if isinstance(value, str) and value:
            return value
    return None


def sft_files(job: Any) -> list[tuple[str, str]]:
    """(role, file id or name) pairs of the files the SFT job trained on."""
    doc = job.status_doc or {}
    found: list[tuple[str, str]] = []
    for role in ("training_file", "validation_file"):
        for key in (role, f"{role}_id"):
            value = doc.get(key)
            if isinstance(value, str) and value and (role, value) not in found:
                found.append((role, value))
    plan = getattr(job, "plan", None)
    for step in getattr(plan, "steps", None) or ():
        upload = getattr(step, "upload", None)
        if upload is not None:
            found.append((getattr(step, "ref", None) or "upload", Path(upload).name))
    return found


def _sft_bundle(job: Any) -> dict[str, Any]:
    model = fine_tuned_model(job)
    rows = [f"| {role} | `{name}` |" for role, name in sft_files(job)]
    md = [f"### SFT result: `{job.id}` ({job.status})", "",
          f"**Model id:** `{model}`" if model else "**Model id:** not reported by the backend", ""]
    if rows:
        md += ["| file | id / name |", "|---|---|", *rows]
    text = "\n".join(md)
    return {"text/markdown": text, "text/plain": text}


def _rl_bundle(job: Any) -> dict[str, Any]:
    body = status_json(job)
    b64 = base64.b64encode(body.encode()).decode("ascii")
    name = f"{job.id}_status.json"
    page = (f"<div class='synth-artifacts'><strong>Final status of {html.escape(str(job.id))}</strong> "
            f"<a download='{html.escape(name)}' href='data:application/json;base64,{b64}'>download {html.escape(name)}</a>"
            f"<pre>{html.escape(body)}</pre></div>")
    return {"text/html": page, "text/plain": f"Final status of {job.id}:\n{body}"}


def _pl_bundle(job: Any, chart_png: bytes | None) -> dict[str, Any]:
    markdown, _ = prompt_learning_summary(job)
    return {"text/markdown": markdown, "text/plain": markdown}


def artifact_bundle(job: Any, *, chart_png: bytes | None = None) -> dict[str, Any] | None:
    """The mimebundle the panel shows when ``job`` is terminal (None for an unknown flow)."""
    if job.flow == "prompt_learning":
        return _pl_bundle(job, chart_png)
    if job.flow == "sft":
        return _sft_bundle(job)
    if job.flow == "rl":
        return _rl_bundle(job)
    return None
