"""The pieces every section of a job's HTML report is made of, and the page and fragment that hold them.

A report is read where nothing runs: a browser opening a file from a shared folder with the network off, a
notebook reopened without its kernel, GitHub's or nbviewer's sanitized view, VS Code, Colab. So it is plain
semantic HTML (headings, tables with header cells, figures with alt text and a caption, ``<details>`` for
long text): it reads with no style and no script, its charts are inline ``data:`` PNGs, and the page's own
Content-Security-Policy forbids every request. The style block only makes it tidier.

Every string from outside (the backend, a task app, a config file) goes through ``html_text`` on its way in;
the page is masked once more on its way out (the job's known secrets), so no section can leak one.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.markup import html_text, no_math_html
from synth_nb.secrets import mask_text

__all__ = ["CSS", "REPORT_FILE", "ReportSource", "Section", "SectionMaker", "add_section", "added_sections",
           "details", "e", "figure", "fragment", "grid_table", "page", "pre", "rows_table"]

#: the report's name in the job's folder (beside ``summary.md`` and the bundle)
REPORT_FILE = "report.html"

e = html_text

#: no request of any kind: inline styles, ``data:`` images and inline script (the explorer's optional one) only
_POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
           "form-action 'none'; base-uri 'none'")

#: scoped to ``.synth-report``, so a fragment in a notebook styles nothing else; >= 4.5:1 contrast in both schemes
CSS = """
.synth-report {font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 14px; line-height: 1.45;
  max-width: 1100px; overflow-wrap: anywhere;}
.synth-report h1 {font-size: 20px; margin: 8px 0;} .synth-report h2 {font-size: 16px; margin: 18px 0 6px;
  border-bottom: 1px solid #8886; padding-bottom: 2px;} .synth-report h3 {font-size: 14px; margin: 10px 0 4px;}
.synth-report table {border-collapse: collapse; margin: 4px 0;}
/* the class twice: JupyterLab right-aligns output table cells with two classes of its own */
.synth-report.synth-report table th, .synth-report.synth-report table td {border: 1px solid #8888; padding: 2px 8px;
  text-align: left; vertical-align: top;}
.synth-report caption {text-align: left; font-style: italic; padding: 2px 0;}
.synth-report .scroll {overflow-x: auto; max-width: 100%;}
.synth-report pre {white-space: pre-wrap; font-size: 12px; background: #8881; padding: 6px; margin: 4px 0;}
.synth-report figure {margin: 6px 0;} .synth-report img {max-width: 100%; height: auto;}
.synth-report .note {opacity: .85; font-style: italic;}
.synth-report .status-succeeded {color: #1b5e20;} .synth-report .status-failed {color: #b71c1c;}
@media (prefers-color-scheme: dark) {
  .synth-report .status-succeeded {color: #81c784;} .synth-report .status-failed {color: #ef9a9a;}
  .synth-report img.chart {filter: invert(1) hue-rotate(180deg);}
}
"""


@dataclass(frozen=True)
class Section:
    """One part of the report: a heading and its body (HTML whose outside strings are escaped already)."""

    key: str
    title: str
    body: str

    def html(self, level: int = 2) -> str:
        return f"<section class='synth-report-{e(self.key)}'><h{level}>{e(self.title)}</h{level}>{self.body}</section>"


@dataclass(frozen=True)
class ReportSource:
    """What a report is made from: the job (its history, masked as it came in) and its folder, where the
    bundle it was sent with (masked config and plan) and its result files are, when it has one."""

    job: Any
    folder: Path | None = None

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values masked in the whole report (the job's client key, the plan's secrets)."""
        return tuple(s for s in getattr(self.job, "hidden", ()) if s)


#: a section a package adds (the inspector's rollout and sample tables): None when the job has nothing to show
SectionMaker = Callable[[ReportSource], "Section | None"]
_ADDED: list[SectionMaker] = []


def add_section(maker: SectionMaker) -> SectionMaker:
    """Add a section to every job report, after the explorer (usable as a decorator); it returns None for a
    job it has nothing to say about. Its body is HTML: every string from outside escaped with ``html_text``."""
    if maker not in _ADDED:
        _ADDED.append(maker)
    return maker


def added_sections(source: ReportSource) -> list[Section]:
    return [section for maker in _ADDED if (section := maker(source)) is not None]


def rows_table(rows: Sequence[tuple[str, str]], caption: str = "") -> str:
    """(label, text) rows: a header cell and a data cell each."""
    body = "".join(f"<tr><th scope='row'>{e(label)}</th><td>{e(text)}</td></tr>" for label, text in rows)
    return f"<table>{f'<caption>{e(caption)}</caption>' if caption else ''}{body}</table>"


def grid_table(headings: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    head = "".join(f"<th scope='col'>{e(h)}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    cap = f"<caption>{e(caption)}</caption>" if caption else ""
    return f"<div class='scroll'><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def pre(text: str) -> str:
    return f"<pre>{e(text)}</pre>"


def details(summary: str, body: str, *, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{e(summary)}</summary>{body}</details>"


def figure(png: bytes, alt: str, caption: str) -> str:
    """A PNG inline (``data:``), its alt text saying what it shows, its caption what it measures."""
    data = base64.b64encode(png).decode("ascii")
    return (f"<figure><img class='chart' alt='{e(alt)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{e(caption)}</figcaption></figure>")


def fragment(title: str, sections: Sequence[Section], secrets: Sequence[str] = (), *, job_id: str = "") -> str:
    """The report as one element (what a notebook output holds): its own scoped style, MathJax kept out."""
    job = f" data-job-id='{e(job_id)}'" if job_id else ""
    body = "".join(s.html() for s in sections)
    markup = (f"<div class='synth-report'{job} role='region' aria-label='{e(title)}'><style>{CSS}</style>"
              f"<h1>{e(title)}</h1>{body}</div>")
    return mask_text(no_math_html(markup), tuple(secrets))


def page(title: str, body: str, secrets: Sequence[str] = ()) -> str:
    """A whole HTML document around ``body`` (a ``fragment``, a comparison): self-contained, no request allowed."""
    return mask_text(
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_POLICY}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<meta name='generator' content='synth-nb'><title>{e(title)}</title></head>"
        f"<body>{body}</body></html>\n", tuple(secrets))
