"""A ``SampleTable`` as one self-contained HTML output: highlights of the latest step, then the table.

Every row is followed by a row holding a ``<details>`` with its full texts: Tab reaches its summary and
Enter opens it, with or without script. A few lines of inline script (they run where the notebook is
trusted) show a filter bar (step, seed, phase, lowest score) that hides the rows it does not keep, and let
a click anywhere on a row open it. Without script the bar stays hidden and the table is as saved. Backend
text is escaped (``synth_nb.markup.html_text``); styles are scoped to the output's own id.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from synth_nb.flows.sample_rows import SampleSpec, fmt
from synth_nb.markup import html_text, no_math_html

__all__ = ["samples_html"]

_CSS = """
#{id} {{font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; max-width: 100%;}}
#{id} h3 {{font-size: 15px; margin: 4px 0 8px;}} #{id} h4 {{font-size: 13px; margin: 12px 0 4px;}}
#{id} .scroll {{overflow-x: auto; max-width: 100%;}}
#{id} table {{border-collapse: collapse; margin: 4px 0;}}
#{id} th, #{id} td {{border: 1px solid #8884; padding: 2px 6px; text-align: left; vertical-align: top;}}
#{id} tr.s {{cursor: pointer;}} #{id} tr.s:hover {{background: #8881;}} #{id} tr.text td {{border-top: 0; padding: 0 6px 2px 18px;}}
#{id} pre {{white-space: pre-wrap; word-break: break-word; margin: 2px 0; font-size: 12px; max-height: 24em; overflow-y: auto;}}
#{id} .note {{opacity: .8; font-style: italic;}} #{id} .bar label {{margin-right: 10px;}} #{id} .bar input {{width: 6em;}}
#{id} .skip {{position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;}}
#{id} .skip:focus {{position: static; width: auto; height: auto; clip-path: none; display: inline-block;}}
"""

#: the filter bar and click-to-open; keys typed in the bar stay in it (JupyterLab's shortcuts skip them)
_SCRIPT = """(() => {
  const root = document.currentScript && document.currentScript.parentElement;
  if (!root) return;
  const bar = root.querySelector(".bar");
  for (const el of root.querySelectorAll("summary, input, select")) el.setAttribute("data-lm-suppress-shortcuts", "true");
  const num = (name) => { const v = bar.querySelector("[name='" + name + "']"); return v && v.value !== "" ? Number(v.value) : null; };
  const apply = () => {
    const step = num("step"), seed = num("seed"), low = num("min");
    const phase = bar.querySelector("[name='phase']");
    const want = phase ? phase.value : "";
    let shown = 0;
    for (const row of root.querySelectorAll("table.all tr.s")) {
      const d = row.dataset;
      const keep = (step === null || Number(d.step) === step) && (seed === null || Number(d.seed) === seed)
        && (low === null || (d.score !== "" && Number(d.score) >= low)) && (!want || d.phase === want);
      row.hidden = !keep;
      row.nextElementSibling.hidden = !keep;
      if (keep) shown += 1;
    }
    bar.querySelector("output").textContent = shown + " rows shown";
  };
  bar.hidden = false;
  bar.addEventListener("input", apply);
  bar.addEventListener("keydown", (event) => event.stopPropagation());
  root.addEventListener("click", (event) => {
    const row = event.target.closest && event.target.closest("tr.s");
    if (!row) return;
    const box = row.nextElementSibling.querySelector("details");
    box.open = !box.open;
    if (box.open) box.querySelector("summary").focus({preventScroll: true});
  });
})();"""


def _e(value: Any) -> str:
    return html_text(value)


def _head(src: SampleSpec) -> str:
    return "<tr>" + "".join(f"<th scope='col'>{_e(label)}</th>" for _, label in src.columns) + "</tr>"


def _rows(src: SampleSpec, rows: Sequence[Mapping[str, Any]]) -> str:
    width = len(src.columns)
    out = []
    for r in rows:
        score = r.get(src.score_key)
        data = (f" data-step='{_e(fmt(r.get('step')))}' data-seed='{_e(fmt(r.get('seed')))}'"
                f" data-phase='{_e(r.get('phase') or '')}' data-score='{'' if score is None else _e(score)}'")
        cells = "".join(f"<td>{_e(fmt(r.get(k)))}</td>" for k, _ in src.columns)
        texts = []
        for key, label in src.texts:
            text = r.get(key) or ""
            full = r.get(f"{key}_chars")
            cut = (f" <span class='note'>(cut: {len(text):,} of {full:,} characters)</span>"
                   if isinstance(full, int) and full > len(text) else "")
            texts.append(f"<div><strong>{_e(label)}</strong>{cut}<pre>{_e(text)}</pre></div>")
        short = " · ".join(f"{label} {fmt(r.get(key))}" for key, label in src.columns[:4] if r.get(key) is not None)
        out.append(f"<tr class='s'{data}>{cells}</tr><tr class='text'><td colspan='{width}'><details><summary>"
                   f"{_e(short)}: {' and '.join(_e(label) for _, label in src.texts)}</summary>{''.join(texts)}"
                   "</details></td></tr>")
    return "".join(out)


def _bar(src: SampleSpec, phases: Sequence[str]) -> str:
    phase = ("<label>phase <select name='phase'><option value=''>all</option>"
             + "".join(f"<option>{_e(p)}</option>" for p in phases) + "</select></label>") if len(phases) > 1 else ""
    return (f"<div class='bar' role='search' hidden><label>step <input name='step' type='number'></label>"
            f"<label>seed <input name='seed' type='number'></label>{phase}"
            f"<label>{_e(src.score_label)} ≥ <input name='min' type='number' step='any'></label>"
            "<output aria-live='polite'></output></div>")


def samples_html(src: SampleSpec, job_id: str, shown: Sequence[Mapping[str, Any]], selected: int,
                 highlights: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], summary: str,
                 phases: Sequence[str]) -> str:
    """The output of a selection of ``selected`` samples of job ``job_id``, of which ``shown`` are listed,
    under ``summary``, with ``highlights`` (the latest step's best and worst) above it."""
    uid = f"synth-samples-{uuid.uuid4().hex[:10]}"
    notes = "".join(f"<p class='note'>{_e(n)}</p>" for n in src.notes)
    parts = [f"<h3>{_e(summary)}</h3>{notes}"]
    if not selected and not highlights:
        parts.append(f"<p>No {_e(src.kind)} in the job's events (a backend that streams none shows none).</p>")
    for label, best in highlights:
        parts.append(f"<h4>{_e(label)}</h4><div class='scroll'><table>{_head(src)}"
                     f"{_rows(src, best)}</table></div>")
    if selected:
        more = (f"<p class='note'>First {len(shown)} of {selected} rows; every row: "
                f"<code>job.{_e(src.kind)}_df()</code>, or narrow with <code>job.{_e(src.kind)}(step=…)</code>.</p>"
                if selected > len(shown) else "")
        parts.append(f"<h4>Sampled {_e(src.kind)} (select a row to open its full text)</h4>{_bar(src, phases)}"
                     f"<div class='scroll'><table class='all'>{_head(src)}{_rows(src, shown)}</table>"
                     f"</div>{more}")
    return no_math_html(
        f"<div class='synth-samples' id='{uid}' role='region' aria-label='{_e(src.title)} of job {_e(job_id)}' "
        f"data-job='{_e(job_id)}'><style>{_CSS.format(id=uid)}</style>"
        f"<a class='skip' href='#{uid}-end'>Skip the {_e(src.kind)}</a>{''.join(parts)}"
        f"<div id='{uid}-end' class='note' tabindex='-1'>End of the {_e(src.kind)}.</div>"
        f"<script>{_SCRIPT}</script></div>")
