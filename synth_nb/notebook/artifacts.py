"""What a finished job leaves in the notebook: its flow's ``Artifact`` rendered as a mimebundle, and the
export of its result files to ``<results_folder>/<job id>/`` with a link to them.

Every bundle carries ``text/markdown`` or ``text/html`` plus ``text/plain`` so nbconvert, GitHub and
VS Code render something readable. An artifact's facts come first; a downloadable document (the RL
final status) follows folded, with a data-URL download link; flows mask what they put in it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import Artifact, FinishedJob, job_results_dir, status_json
from synth_nb.job.report_html import artifact_html
from synth_nb.job.results import Results, write_files
from synth_nb.markup import md_code, md_text, no_math_html, no_math_markdown

__all__ = ["artifact_bundle", "export_bundle", "export_results", "export_status", "export_summary",
           "render_artifact", "results_bundle", "written_sentence"]


def _document_page(artifact: Artifact) -> str:
    assert artifact.document is not None
    return artifact_html(artifact)  # the report's renderer: the same page in the notebook and report.html


def render_artifact(artifact: Artifact) -> dict[str, Any]:
    """The mimebundle of an artifact: Markdown to read, or its facts and a folded, downloadable document."""
    if artifact.document is None:
        return {"text/markdown": no_math_markdown(artifact.markdown), "text/plain": artifact.markdown}
    facts = "".join(f"\n- {fact}" for fact in artifact.facts)
    return {"text/html": no_math_html(_document_page(artifact)),
            "text/plain": f"{artifact.title}{facts}\n{artifact.document.name}:\n{artifact.document.text}"}


def artifact_bundle(job: FinishedJob) -> dict[str, Any] | None:
    """The mimebundle the panel shows when ``job`` is terminal (None when its flow shows nothing)."""
    artifact = get_flow(job.flow).artifacts(job)
    return render_artifact(artifact) if artifact is not None else None


def export_summary(job: FinishedJob, folder: str | Path | None = None) -> list[Path]:
    """Write the job's result files into ``folder`` as given; returns the main file written (none for a
    flow without results)."""
    return write_files(job, Path(folder) if folder is not None else Path.cwd())[:1]


def export_results(job: FinishedJob, results_folder: Path | None) -> list[Path]:
    """Write the job's result files into ``<results_folder>/<job id>/`` (``results/<job id>/`` in the
    working directory when the folder is not known); returns the files written, the main one first.

    The folder may hold other files of the job (its bundle); only those this export wrote are named.
    """
    return write_files(job, job_results_dir(job.id, results_folder))


def results_bundle(results: Results, base: Path) -> tuple[dict[str, Any] | None, str]:
    """What a panel shows of a finished job's results (``synth_nb.job.results``): the summary's links and the
    sentence its row says, a problem included (the job's result stays shown and the panel still ends)."""
    problem = results.problem or results.bundle_problem
    if problem is not None:
        text = problem[0].upper() + problem[1:]
        return {"text/markdown": f"**{md_text(text)}**", "text/plain": text}, text
    if results.files:
        return export_bundle(results.files, base), written_sentence(results.files, base)
    if results.bundle is None:
        return None, ""
    folder = _link_path(results.bundle, base)
    verb = "Its bundle is in" if results.earlier else "Wrote the job's bundle to"
    text = f"{verb} {folder}/"
    return {"text/markdown": f"**{verb}** {md_code(folder + '/')}", "text/plain": text}, text


def _link_path(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` (the notebook's folder) when it is inside it, else absolute."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(base.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(absolute, base.resolve()) if absolute.anchor == base.resolve().anchor else str(absolute)


def written_sentence(paths: Sequence[Path], base: Path) -> str:
    """"Wrote summary.md and summary_curve.png to results/pl_1/": what the live region says after an export."""
    if not paths:
        return "Nothing to write for this job."
    names = [p.name for p in paths]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"Wrote {listed} to {_link_path(paths[0].parent, base)}/"


def export_bundle(paths: Sequence[Path], base: Path) -> dict[str, Any]:
    """Markdown with a link to each written file, relative to ``base`` so it opens from the notebook."""
    links = ", ".join(f"[{p.name}]({quote(_link_path(p, base))})" for p in paths)
    folder = _link_path(paths[0].parent, base) if paths else ""
    text = f"**Written** to `{folder}/`: {links}" if paths else "Nothing was written."
    return {"text/markdown": text, "text/plain": written_sentence(paths, base)}


def export_status(job: FinishedJob, path: str | Path) -> Path:
    """Write the masked final status JSON (the RL artifact) to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(status_json(job) + "\n", encoding="utf-8")
    return out
