"""``SampleTable``: the samples behind a job's numbers (RL rollouts, SFT completions), on every door.

A table is a selection (``SampleFilter``: step, seed, phase, score range, best or worst K) made over the
columns of a job's sample index (step, seed, phase, score per sample, ``synth_nb.job.sample_index``) with
numpy; only the rows it shows are built from their events (``load``). It shows itself as a notebook output
(``samples_html``: static HTML, which a saved notebook keeps), Markdown, a terminal listing and a DataFrame.
``highlights`` are the best and worst rows of the latest step of the whole stream.

Every text in a row came from the backend: it is cut (``sample_rows.MAX_TEXT_CHARS``), shown inert in a
terminal (``synth_nb.untrusted``) and escaped in markup (``synth_nb.markup``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synth_nb.flows.sample_rows import MAX_HTML_ROWS, SampleFilter, SampleSpec, as_int, fmt, row_label
from synth_nb.flows.samples_html import samples_html
from synth_nb.markup import md_block, md_text, no_math_markdown
from synth_nb.untrusted import inert

__all__ = ["HIGHLIGHTS", "SampleFilter", "SampleSpec", "SampleTable"]

#: best and worst rows of the latest step shown above the table
HIGHLIGHTS = 3
#: the integer columns' missing value (``synth_nb.job.sample_index.MISSING``)
_MISSING = -(2**63)

#: (arrival rows of the events) -> their ``data``
Loader = Callable[[Sequence[int]], list[Any]]


@dataclass
class SampleTable:
    """A selection of a job's samples that renders itself: ``to_html()``, ``to_markdown()``, ``to_text()``,
    ``frame()``; ``rows`` builds every selected row (``head(n)`` only the first n)."""

    spec: SampleSpec
    job_id: str
    #: the index columns (numpy, seq order): rows, step, seed, phase (codes), score
    columns: dict[str, Any]
    phases: list[str | None]
    load: Loader
    selection: SampleFilter = field(default_factory=SampleFilter)
    #: positions (into ``columns``) of the selected samples, in the order they are shown
    chosen: Any = None
    highlight_positions: list[tuple[str, Any]] = field(default_factory=list)

    @classmethod
    def select(cls, spec: SampleSpec, job_id: str, columns: dict[str, Any], phases: list[str | None], load: Loader,
               selection: SampleFilter | None = None) -> SampleTable:
        import numpy as np

        selection = selection or SampleFilter()
        step, seed, score = columns["step"], columns["seed"], columns["score"]
        keep = np.ones(len(step), dtype=bool)
        if selection.step is not None:
            keep &= step == selection.step
        if selection.seed is not None:
            keep &= seed == selection.seed
        if selection.phase is not None:
            code = phases.index(selection.phase) if selection.phase in phases else -1
            keep &= columns["phase"] == code
        if selection.min_score is not None:
            keep &= score >= selection.min_score  # NaN (no score) compares False
        if selection.max_score is not None:
            keep &= score <= selection.max_score
        chosen = np.flatnonzero(keep)
        if selection.worst or selection.best:
            scored = chosen[~np.isnan(score[chosen])]
            ranked = scored[np.argsort(score[scored], kind="stable")]
            chosen = np.concatenate([ranked[:selection.worst or 0], ranked[::-1][:selection.best or 0]])
        table = cls(spec, job_id, columns, phases, load, selection, chosen)
        table.highlight_positions = table._highlights()
        return table

    # -- rows ------------------------------------------------------------------------------------

    def _rows_at(self, positions: Sequence[int]) -> list[dict[str, Any]]:
        return [self.spec.row(d) for d in self.load([int(self.columns["rows"][p]) for p in positions])]

    def head(self, n: int | None) -> list[dict[str, Any]]:
        """The first ``n`` selected rows (all: None), built from their events."""
        return self._rows_at(list(self.chosen[:n] if n is not None else self.chosen))

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Every selected row (built once)."""
        return self.head(None)

    def __len__(self) -> int:
        return len(self.chosen)

    @property
    def highlights(self) -> list[tuple[str, list[dict[str, Any]]]]:
        return [(label, self._rows_at(list(positions))) for label, positions in self.highlight_positions]

    def _highlights(self) -> list[tuple[str, Any]]:
        """The best and worst ``HIGHLIGHTS`` of the latest step (of the spec's ``highlight_phase``)."""
        import numpy as np

        step, score = self.columns["step"], self.columns["score"]
        pool = (step != _MISSING) & ~np.isnan(score)
        if self.spec.highlight_phase is not None:
            code = self.phases.index(self.spec.highlight_phase) if self.spec.highlight_phase in self.phases else -1
            pool &= self.columns["phase"] == code
        if not pool.any():
            return []
        latest = int(step[pool].max())
        at = np.flatnonzero(pool & (step == latest))
        ranked = at[np.argsort(score[at], kind="stable")]
        best = ranked[::-1][:HIGHLIGHTS]
        worst = [p for p in ranked[:HIGHLIGHTS] if p not in set(best.tolist())]
        out: list[tuple[str, Any]] = [(f"Best of step {latest} (by {self.spec.score_label})", best)]
        return out + ([(f"Worst of step {latest}", worst)] if worst else [])

    # -- outputs ---------------------------------------------------------------------------------

    def summary_line(self) -> str:
        step = self.columns["step"]
        known = step[step != _MISSING]
        low, high = (int(known.min()), int(known.max())) if len(known) else (None, None)
        span = f", steps {low}–{high}" if low != high else f", step {low}" if low is not None else ""
        line = f"{self.spec.title} of job {self.job_id}: {len(step)} sampled{span}"
        chosen = self.selection.describe(self.spec.score_label)
        return line + (f"; {len(self)} shown ({chosen})" if chosen else "")

    def frame(self) -> Any:
        """The selected rows as a pandas DataFrame, one column per field (whole numbers as ``Int64``)."""
        import pandas as pd

        rows = self.rows
        keys = [k for k, _ in self.spec.columns] + [k for k, _ in self.spec.texts]
        extra = sorted({k for r in rows for k in r} - set(keys))
        frame = pd.DataFrame(rows, columns=keys + extra)
        for key in frame.columns:  # whole numbers stay whole where some are missing (not floats with NaN)
            values = [r.get(key) for r in rows]
            if any(v is not None for v in values) and all(as_int(v) is not None for v in values if v is not None):
                frame[key] = frame[key].astype("Int64")
        return frame

    def to_html(self) -> str:
        if self.selection.worst or self.selection.best:
            order = self.chosen
        else:  # the newest steps first
            order = self.chosen[(-self.columns["step"][self.chosen]).argsort(kind="stable")]
        shown = self._rows_at(list(order[:MAX_HTML_ROWS]))
        return samples_html(self.spec, self.job_id, shown, len(self), self.highlights, self.summary_line(),
                            self._phases_present())

    def _phases_present(self) -> list[str]:
        import numpy as np

        return sorted(p for code in np.unique(self.columns["phase"]) if (p := self.phases[int(code)]) is not None)

    def to_markdown(self, limit: int = 40) -> str:
        spec = self.spec
        rows = self.head(limit)
        lines = [f"## {md_text(self.summary_line())}", ""] + [md_text(n) for n in spec.notes] + [""]
        for label, best in self.highlights:
            lines += [f"### {md_text(label)}", "", *_md_table(spec, best), ""]
        lines += ["### Rows", "", *_md_table(spec, rows), ""]
        if len(self) > limit:
            lines.append(f"{len(self) - limit} more rows: `job.{spec.kind}_df()`")
        for r in rows[:10]:
            lines.append(f"**{md_text(row_label(spec, r))}**")
            lines += [f"{label}:\n\n{md_block(r.get(key) or '')}" for key, label in spec.texts]
        return no_math_markdown("\n".join(lines) + "\n")

    def to_text(self, limit: int | None = None) -> str:
        """A terminal listing: one header line per row, then its texts indented; backend text made inert."""
        spec = self.spec
        out = [inert(self.summary_line())] + [inert(n) for n in spec.notes]
        if not len(self.columns["step"]):
            out.append(f"no {spec.kind} in the job's events (the backend streams none, or none yet)")
        for r in self.head(limit):
            out += ["", "── " + inert(row_label(spec, r))]
            for key, label in spec.texts:
                text = r.get(key) or ""
                lines = text.split("\n")
                out.append(f"  {label:<11} " + inert(lines[0]))
                out += [" " * 14 + inert(line) for line in lines[1:]]
                full = r.get(f"{key}_chars")
                if isinstance(full, int) and full > len(text):
                    out.append(" " * 14 + f"(cut: {len(text):,} of {full:,} characters)")
        if limit is not None and len(self) > limit:
            out.append(f"\n{len(self) - limit} more; narrow with --step / --worst")
        return "\n".join(out) + "\n"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.to_html(), "text/plain": self.summary_line()}

    def __repr__(self) -> str:
        return f"SampleTable({self.summary_line()})"


def _md_table(spec: SampleSpec, rows: Sequence[dict[str, Any]]) -> list[str]:
    head = "| " + " | ".join(label for _, label in spec.columns) + " |"
    rule = "|" + "---|" * len(spec.columns)
    return [head, rule] + ["| " + " | ".join(md_text(fmt(r.get(k))) for k, _ in spec.columns) + " |" for r in rows]
