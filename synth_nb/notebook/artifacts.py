"""What a finished job leaves in the notebook: its flow's ``Artifact`` rendered as a mimebundle, and the
export of its result files.

Every bundle carries ``text/markdown`` or ``text/html`` plus ``text/plain`` so nbconvert, GitHub and
VS Code render something readable. A downloadable document (the RL final status) is embedded as a data
URL; flows mask what they put in it.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import Artifact, FinishedJob, status_json

__all__ = ["artifact_bundle", "export_status", "export_summary", "render_artifact"]


def render_artifact(artifact: Artifact) -> dict[str, Any]:
    """The mimebundle of an artifact: Markdown to read, or a document shown in full with a download link."""
    document = artifact.document
    if document is None:
        return {"text/markdown": artifact.markdown, "text/plain": artifact.markdown}
    b64 = base64.b64encode(document.text.encode()).decode("ascii")
    name = html.escape(document.name)
    intro = f"<div>{html.escape(artifact.markdown)}</div>" if artifact.markdown else ""
    page = (f"<div class='synth-artifacts'><strong>{html.escape(artifact.title)}</strong> "
            f"<a download='{name}' href='data:{html.escape(document.media_type)};base64,{b64}'>download {name}</a>"
            f"{intro}<pre>{html.escape(document.text)}</pre></div>")
    return {"text/html": page, "text/plain": f"{artifact.title}:\n{document.text}"}


def artifact_bundle(job: FinishedJob) -> dict[str, Any] | None:
    """The mimebundle the panel shows when ``job`` is terminal (None when its flow shows nothing)."""
    artifact = get_flow(job.flow).artifacts(job)
    return render_artifact(artifact) if artifact is not None else None


def export_summary(job: FinishedJob, folder: str | Path | None = None) -> list[Path]:
    """Write the job's result files into ``folder`` (default: the current directory, which is the
    notebook's folder in Jupyter); returns the main file written (none for a flow without results)."""
    target = Path(folder) if folder is not None else Path.cwd()
    main = get_flow(job.flow).write_results(job, target)
    return [main] if main is not None else []


def export_status(job: FinishedJob, path: str | Path) -> Path:
    """Write the masked final status JSON (the RL artifact) to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(status_json(job) + "\n", encoding="utf-8")
    return out
