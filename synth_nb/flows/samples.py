"""``SampleTable``: the samples behind a job's numbers (RL rollouts, SFT completions), on every door.

A flow that streams samples (``Flow.sample_kind``) reads its events into plain rows (``SampleRows``); this
module selects from them (``SampleFilter``: step, seed, phase, score range, best or worst K) and shows the
selection as a notebook output (``samples_html``: static HTML, a saved notebook keeps it), Markdown, a
terminal listing and a DataFrame; the bundle writes every row as JSON lines. Rows are built only when a
view is asked for: the job keeps the events themselves (compressed, ``synth_nb.job.logs``).

Every text in a row came from the backend: it is cut to ``MAX_TEXT_CHARS`` here too (a backend other than
the embedded one may send any length), shown inert in a terminal (``synth_nb.untrusted``) and escaped in
markup (``synth_nb.markup``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synth_nb.flows.sample_rows import SampleFilter, SampleRows, as_int, fmt, row_label
from synth_nb.flows.samples_html import samples_html
from synth_nb.markup import md_block, md_text, no_math_markdown
from synth_nb.untrusted import inert

__all__ = ["SampleFilter", "SampleRows", "SampleTable"]

#: best and worst rows of the latest step shown above the table
HIGHLIGHTS = 3


@dataclass
class SampleTable:
    """A selection of a job's samples that renders itself: ``to_html()``, ``to_markdown()``, ``to_text()``,
    ``frame()``; ``highlights`` are the best and worst of the latest step (of the whole stream)."""

    source: SampleRows
    selection: SampleFilter = field(default_factory=SampleFilter)
    rows: list[dict[str, Any]] = field(default_factory=list)
    highlights: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @classmethod
    def select(cls, source: SampleRows, selection: SampleFilter | None = None) -> SampleTable:
        selection = selection or SampleFilter()
        key = source.score_key
        kept = [r for r in source.rows if selection.keeps(r, key)]
        if selection.worst or selection.best:
            ranked = sorted((r for r in kept if r.get(key) is not None), key=lambda r: r[key])
            kept = (ranked[:selection.worst] if selection.worst else []) + (
                ranked[::-1][:selection.best] if selection.best else [])
        return cls(source, selection, kept, _highlights(source))

    @property
    def kind(self) -> str:
        return self.source.kind

    def summary_line(self) -> str:
        src = self.source
        steps = sorted({s for r in src.rows if (s := r.get("step")) is not None})
        span = f", steps {steps[0]}–{steps[-1]}" if len(steps) > 1 else f", step {steps[0]}" if steps else ""
        line = f"{src.title} of job {src.job_id}: {len(src.rows)} sampled{span}"
        chosen = self.selection.describe(src.score_label)
        return line + (f"; {len(self.rows)} shown ({chosen})" if chosen else "")

    def records(self) -> list[dict[str, Any]]:
        """The selected rows as plain dicts (what ``frame()`` and the bundle's JSON lines hold)."""
        return [dict(r) for r in self.rows]

    def frame(self) -> Any:
        """The selected rows as a pandas DataFrame, one column per field."""
        import pandas as pd

        keys = [k for k, _ in self.source.columns] + [k for k, _ in self.source.texts]
        extra = sorted({k for r in self.rows for k in r} - set(keys))
        frame = pd.DataFrame(self.rows, columns=keys + extra)
        for key in frame.columns:  # whole numbers stay whole where some are missing (not floats with NaN)
            values = [r.get(key) for r in self.rows]
            if any(v is not None for v in values) and all(as_int(v) is not None for v in values if v is not None):
                frame[key] = frame[key].astype("Int64")
        return frame

    def to_html(self) -> str:
        return samples_html(self.source, self.selection, self.rows, self.highlights, self.summary_line())

    def to_markdown(self, limit: int = 40) -> str:
        src = self.source
        lines = [f"## {md_text(self.summary_line())}", ""] + [md_text(n) for n in src.notes] + [""]
        for label, rows in self.highlights:
            lines += [f"### {md_text(label)}", "", *_md_table(src, rows), ""]
        lines += ["### Rows", "", *_md_table(src, self.rows[:limit]), ""]
        if len(self.rows) > limit:
            lines.append(f"{len(self.rows) - limit} more rows: `job.{src.kind}_df()`")
        for r in self.rows[:min(limit, 10)]:
            lines.append(f"**{md_text(row_label(src, r))}**")
            lines += [f"{label}:\n\n{md_block(r.get(key) or '')}" for key, label in src.texts]
        return no_math_markdown("\n".join(lines) + "\n")

    def to_text(self, limit: int | None = None) -> str:
        """A terminal listing: one header line per row, then its texts indented; backend text made inert."""
        src = self.source
        rows = self.rows if limit is None else self.rows[:limit]
        out = [inert(self.summary_line())] + [inert(n) for n in src.notes]
        if not src.rows:
            out.append(f"no {src.kind} in the job's events (the backend streams none, or none yet)")
        for r in rows:
            out.append("")
            out.append("── " + inert(row_label(src, r)))
            for key, label in src.texts:
                text = r.get(key) or ""
                lines = text.split("\n") or [""]
                out.append(f"  {label:<11} " + inert(lines[0]))
                out += [" " * 14 + inert(line) for line in lines[1:]]
                if r.get(f"{key}_chars", 0) > len(text):
                    out.append(" " * 14 + f"(cut: {len(text):,} of {r[f'{key}_chars']:,} characters)")
        if limit is not None and len(self.rows) > limit:
            out.append(f"\n{len(self.rows) - limit} more; narrow with --step / --worst")
        return "\n".join(out) + "\n"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.to_html(), "text/plain": self.summary_line()}

    def __repr__(self) -> str:
        return f"SampleTable({self.summary_line()})"


def _md_table(src: SampleRows, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    head = "| " + " | ".join(label for _, label in src.columns) + " |"
    rule = "|" + "---|" * len(src.columns)
    return [head, rule] + ["| " + " | ".join(md_text(fmt(r.get(k))) for k, _ in src.columns) + " |" for r in rows]


def _highlights(src: SampleRows) -> list[tuple[str, list[dict[str, Any]]]]:
    """The best and worst ``HIGHLIGHTS`` rows of the latest step (of ``highlight_phase``)."""
    pool: Iterable[dict[str, Any]] = (r for r in src.rows if src.highlight_phase is None
                                      or r.get("phase") == src.highlight_phase)
    scored = [r for r in pool if r.get(src.score_key) is not None and r.get("step") is not None]
    if not scored:
        return []
    latest = max(r["step"] for r in scored)
    ranked = sorted((r for r in scored if r["step"] == latest), key=lambda r: r[src.score_key])
    best = ranked[::-1][:HIGHLIGHTS]
    worst = [r for r in ranked[:HIGHLIGHTS] if all(r is not b for b in best)]
    out = [(f"Best of step {latest} (by {src.score_label})", best)]
    return out + ([(f"Worst of step {latest}", worst)] if worst else [])
