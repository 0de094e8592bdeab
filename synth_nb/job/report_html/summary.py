"""The report's summary and explorer: the flow's result (``Flow.artifacts``) and, for a flow that has one,
its explorer (``Flow.explorer``: prompt learning's candidates, Pareto front and per-seed wins), both static.

``artifact_html`` is the one HTML renderer of a flow's result: the notebook's summary output uses it for a
result with a document (the RL final status), the report for every result. A result's Markdown is rendered
here with markdown-it, raw HTML off (a backend's ``<img onerror>`` stays text) and its link check on (no
``javascript:`` link), so the page needs no script to show it.
"""

from __future__ import annotations

import base64
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import Artifact
from synth_nb.job.report_html._base import ReportSource, Section, e
from synth_nb.markup import no_math_html

__all__ = ["artifact_html", "explorer_section", "markdown_html", "summary_section"]


def markdown_html(markdown: str, *, below: int = 2) -> str:
    """CommonMark (with tables) as HTML, its headings ``below`` levels down (under the report's own); raw HTML
    in it is shown as text, unsafe links are not made."""
    from markdown_it import MarkdownIt  # why here: only a report renders Markdown (import ~30 ms)

    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(markdown)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1:]) + below)}"
    return str(parser.renderer.render(tokens, parser.options, {}))


def artifact_html(artifact: Artifact, *, markdown: bool = False) -> str:
    """A flow's result as HTML: its title, its facts, its Markdown (rendered when ``markdown``, else as text, as
    the notebook shows it beside its own Markdown copy), and its document folded with a ``data:`` download link."""
    if markdown and artifact.document is None:  # its Markdown says it all, heading and facts included
        return f"<div class='synth-artifacts'>{markdown_html(artifact.markdown)}</div>"
    facts = "".join(f"<li>{e(fact)}</li>" for fact in artifact.facts)
    if artifact.markdown:
        intro = markdown_html(artifact.markdown) if markdown else f"<div>{e(artifact.markdown)}</div>"
    else:
        intro = ""
    document = ""
    if artifact.document is not None:
        doc = artifact.document
        b64 = base64.b64encode(doc.text.encode()).decode("ascii")
        name, lines = e(doc.name), doc.text.count("\n") + 1
        document = (f"<details><summary>{name} ({lines} lines)</summary>"
                    f"<p><a download='{name}' href='data:{e(doc.media_type)};base64,{b64}'>download {name}</a>"
                    f"</p><pre>{e(doc.text)}</pre></details>")
    return (f"<div class='synth-artifacts'><p><strong>{e(artifact.title)}</strong></p>"
            f"{f'<ul>{facts}</ul>' if facts else ''}{intro}{document}</div>")


def summary_section(source: ReportSource) -> Section | None:
    artifact = get_flow(source.job.flow).artifacts(source.job)
    if artifact is None:
        return None
    return Section("summary", "Summary", no_math_html(artifact_html(artifact, markdown=True)))


def explorer_section(source: ReportSource) -> Section | None:
    job: Any = source.job
    if not callable(getattr(job.events, "of_types", None)):
        return None  # a stand-in holding a plain list of events: not an explorable job
    explorer = get_flow(job.flow).explorer(job)
    if explorer is None:
        return None
    return Section("explorer", "Explorer", explorer.to_html())  # its own heading is its summary line
