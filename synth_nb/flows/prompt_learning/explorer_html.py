"""The explorer as one self-contained HTML output: Pareto plots, candidates, per-seed wins, lineage, diffs.

Everything is static HTML, so a saved notebook shows it as it was. Each Pareto point (and each lineage
and parent entry) is a link to its candidate's row, whose ``<details>`` holds the prompt marked against
its parent; Tab and Enter reach and follow them. A few lines of inline script, which run where the
notebook is trusted, make following a link open that prompt in place instead of navigating; without
them the ``<details>`` still open with Enter. The candidates table is the text alternative to the plots.
Styles are scoped to the output's own id.
"""

from __future__ import annotations

import uuid
from typing import Any

from synth_nb.flows.prompt_learning.explorer_markdown import (
    MAX_SEED_COLUMNS,
    fmt,
    lineage_label,
    shown_candidates,
)
from synth_nb.flows.prompt_learning.explorer_model import Exploration, LineageNode
from synth_nb.flows.prompt_learning.explorer_svg import pareto_svg
from synth_nb.flows.prompt_learning.key_shapes import mask_key_shapes
from synth_nb.flows.prompt_learning.prompt_diff import MessageDiff
from synth_nb.markup import html_text, no_math_html

__all__ = ["diff_html", "explorer_html"]

#: rejected proposals listed (the first ones); the rest are in ``job.candidates_df(include_rejected=True)``
MAX_REJECTED = 20
#: the longest proposer text a rejected proposal shows here (a saved notebook keeps every output)
MAX_SHOWN_CHARS = 1200


def _shown(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return _e(text)
    return (f"{_e(text[:MAX_SHOWN_CHARS])}…</pre><p class='note'>cut at {MAX_SHOWN_CHARS:,} of {len(text):,} "
            "characters: the whole text is in <code>job.candidates_df(include_rejected=True)</code></p><pre hidden>")

_CSS = """
#{id} {{font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; max-width: 100%;}}
#{id} h3 {{font-size: 15px; margin: 4px 0 8px;}} #{id} h4 {{font-size: 13px; margin: 12px 0 4px;}}
#{id} .plots {{display: flex; flex-wrap: wrap; gap: 12px;}}
#{id} svg .ax {{stroke: currentColor; opacity: .6;}} #{id} svg .tick, #{id} svg .axl, #{id} svg .ptl {{font-size: 10px; fill: currentColor;}}
#{id} svg .front {{fill: none; stroke: #e07b00; stroke-width: 1.5; stroke-dasharray: 4 2;}}
#{id} svg .pt {{fill: #1f77b4; fill-opacity: .8; stroke: #fff; stroke-width: 1;}} #{id} svg .pt.on {{fill: #e07b00;}}
#{id} svg .pt.base {{fill: #666;}} #{id} svg .pt.best {{fill: #2ca02c;}}
#{id} svg g.point {{cursor: pointer; outline: none;}}
#{id} svg g.point:focus .pt, #{id} svg g.point:hover .pt {{stroke: currentColor; stroke-width: 3;}}
#{id} svg g.point:focus-visible .pt {{stroke-width: 4;}}
#{id} .skip {{position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;}}
#{id} .skip:focus {{position: static; width: auto; height: auto; clip-path: none; display: inline-block; margin: 2px 0;}}
#{id} .scroll {{overflow-x: auto; max-width: 100%;}}
#{id} table {{border-collapse: collapse; margin: 4px 0;}} #{id} th, #{id} td {{border: 1px solid #8884; padding: 2px 6px; text-align: left; vertical-align: top;}}
#{id} td.own {{background: #2ca02c33; font-weight: bold;}} #{id} tr:target, #{id} tr.hit {{outline: 2px solid #e07b00;}}
#{id} pre {{white-space: pre-wrap; margin: 2px 0; font-size: 12px;}} #{id} tr.prompt td {{border-top: 0; padding: 0 6px 2px 18px;}}
#{id} del {{background: #d6272833; text-decoration: line-through;}} #{id} ins {{background: #2ca02c33; text-decoration: underline;}}
#{id} caption {{text-align: left; font-size: 12px;}} #{id} .note {{opacity: .8; font-style: italic;}} #{id} ul.tree {{margin: 2px 0; padding-left: 18px;}}
"""


def _e(value: Any) -> str:
    """Backend text as HTML text or a quoted attribute value, key shapes masked."""
    return html_text(mask_key_shapes(str(value)))


def diff_html(diffs: list[MessageDiff]) -> str:
    """Per message: its role, the word counts and the text with ``<del>``/``<ins>`` marks."""
    out = []
    for d in diffs:
        head = f"<strong>{_e(d.role)}</strong>" + (f" <code>{_e(d.name)}</code>" if d.name else "")
        if not d.changed:
            out.append(f"<div>{head}: unchanged</div>")
            continue
        body = "".join(f"<{tag}>{_e(p.text)}</{tag}>" if (tag := {"added": "ins", "removed": "del"}.get(p.op))
                       else _e(p.text) for p in d.pieces)
        out.append(f"<div>{head}: +{d.words('added')} / −{d.words('removed')} words<pre>{body}</pre></div>")
    return "".join(out)


def _prompt(ex: Exploration, index: int, uid: str) -> str:
    """The candidate's prompt; with a parent, as its word diff against the parent (the same text, marked)."""
    c = ex.candidate(index)
    if c is None or c.messages is None:
        return "<p class='note'>no prompt text in the stream</p>"
    diff = ex.parent_diff(index)
    if diff:
        return (f"<p class='note'>marked against its parent <a href='#{uid}-c{c.parents[0]}'>#{c.parents[0]}</a> "
                f"(unchanged messages are as there)</p>{diff_html(diff)}")
    return "".join(f"<div><strong>{_e(m.role)}</strong><pre>{_e(m.content)}</pre></div>" for m in c.messages)


def _candidates(ex: Exploration, uid: str) -> str:
    front = set(ex.frontier("length")) | set(ex.frontier("rollouts"))
    shown = set(shown_candidates(ex))
    head = ("<tr><th scope='col'>#</th><th scope='col'>Origin</th><th scope='col'>Parents</th>"
            "<th scope='col'>Search score (validation seeds)</th><th scope='col'>Held-out score (unseen seeds)</th>"
            "<th scope='col'>Minibatch score (proposal check)</th>"
            "<th scope='col'>Accepted</th><th scope='col'>≈ Tokens</th><th scope='col'>Rollouts</th>"
            "<th scope='col'>Seeds owned</th><th scope='col'>Frontier</th></tr>")
    rows = []
    for r in ex.rows():
        i = r["candidate"]
        if i not in shown:
            continue
        mark = " (baseline)" if r["baseline"] else " (best by search score)" if r["best"] else ""
        parents = ", ".join(f"<a href='#{uid}-c{p}'>#{p}</a>" for p in r["parents"]) or "—"
        rows.append(
            f"<tr id='{uid}-row{i}' data-candidate='{i}'><th scope='row'>{i}{mark}</th><td>{_e(r['origin'])}</td>"
            f"<td>{parents}</td><td>{fmt(r['score'])}</td><td>{fmt(r['heldout'])}</td>"
            f"<td>{fmt(r['minibatch_score'])}</td><td>{fmt(r['accepted'])}</td><td>{fmt(r['prompt_tokens'])}</td>"
            f"<td>{fmt(r['rollouts'])}</td><td>{r['seeds_owned']}</td><td>{'yes' if i in front else ''}</td></tr>"
            f"<tr class='prompt'><td colspan='11'><details><summary>prompt #{i}</summary>"
            f"<div id='{uid}-c{i}' tabindex='-1'>{_prompt(ex, i, uid)}</div></details></td></tr>")
    more = (f"<p class='note'>{len(ex.candidates) - len(shown)} more candidates in <code>job.candidates_df()</code>"
            "</p>" if len(shown) < len(ex.candidates) else "")
    return (f"<h4 id='{uid}-cands'>Candidates</h4><div class='scroll'><table><caption class='note'>One row per "
            f"candidate; the table alternative to the plots.</caption>{head}{''.join(rows)}</table></div>{more}")


def _wins(ex: Exploration, uid: str) -> str:
    wins = ex.wins()
    if not wins.seeds:
        return ""
    shown = [i for i in wins.candidates if i in set(shown_candidates(ex))]
    seeds = wins.seeds[:4 * MAX_SEED_COLUMNS]
    head = "<tr><th scope='col'>#</th>" + "".join(f"<th scope='col'>{_e(s)}</th>" for s in seeds) + "</tr>"
    rows = []
    for i in shown:
        cells = []
        for s in seeds:
            value = _score_cell(wins.scores.get((i, s)))
            cells.append(f"<td class='own'>{value}★</td>" if i in wins.owners.get(s, ()) else f"<td>{value}</td>")
        rows.append(f"<tr><th scope='row'><a href='#{uid}-c{i}'>#{i}</a> ({len(wins.owned_by(i))})</th>"
                    + "".join(cells) + "</tr>")
    cut = f" First {len(seeds)} of {len(wins.seeds)} seeds." if len(seeds) < len(wins.seeds) else ""
    return (f"<h4>Per-seed wins (candidates × validation seeds)</h4><p class='note'>★ the candidate has the best "
            f"score on that seed (it owns it); seeds every candidate scores the same are owned by none; (n) seeds "
            f"owned.{cut}</p><div class='scroll'><table>{head}{''.join(rows)}</table></div>")


def _score_cell(value: float | None) -> str:
    """A per-seed score: ``1``/``0`` for right/wrong, two decimals otherwise."""
    if value is None:
        return "—"
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _rejected(ex: Exploration, uid: str) -> str:
    """The rejected layer: every proposal the search did not keep, why, and what its proposer saw and said."""
    rejected = ex.rejected()
    if not rejected:
        return ""
    shown = rejected[:MAX_REJECTED]
    head = ("<tr><th scope='col'>Proposal</th><th scope='col'>Parent</th><th scope='col'>Operator</th>"
            "<th scope='col'>Minibatch score</th><th scope='col'>Parent's minibatch score</th>"
            "<th scope='col'>Why not kept</th></tr>")
    rows = []
    for p in shown:
        parents = ", ".join(f"<a href='#{uid}-c{q}'>#{q}</a>" for q in p.parents) or _e(p.parent_label or "—")
        texts = [(label, text) for label, text in (("proposed text", p.proposed_text()),
                                                   ("proposer input", p.proposer_input),
                                                   ("proposer output (raw)", p.proposer_output)) if text]
        body = "".join(f"<div><strong>{label}</strong><pre>{_shown(text)}</pre></div>" for label, text in texts)
        rows.append(f"<tr id='{uid}-p{p.number}'><th scope='row'>{_e(p.transformation_id or p.number)}</th>"
                    f"<td>{parents}</td><td>{_e(p.operator or p.kind)}</td><td>{fmt(p.minibatch_score)}</td>"
                    f"<td>{fmt(p.parent_score)}</td><td>{_e(p.reason or 'rejected (no reason sent)')}</td></tr>"
                    + (f"<tr class='prompt'><td colspan='6'><details><summary>proposal {_e(p.transformation_id or p.number)}: "
                       f"{', '.join(label for label, _ in texts)}</summary>{body}</details></td></tr>" if texts else ""))
    more = (f"<p class='note'>{len(rejected) - len(shown)} more in <code>job.candidates_df(include_rejected=True)"
            "</code></p>" if len(rejected) > len(shown) else "")
    return (f"<h4 id='{uid}-rejected'>Rejected proposals ({len(rejected)} of {len(ex.proposals)})</h4><p class='note'>"
            "Proposals the search made but did not keep: the minibatch score that decided it beside its parent's "
            "(the reason says what it was measured against); open one for the proposed text and what the proposer was asked and answered.</p>"
            f"<div class='scroll'><table>{head}{''.join(rows)}</table></div>{more}")


def _lineage(ex: Exploration, uid: str) -> str:
    def node(n: LineageNode) -> str:
        kids = "".join(node(k) for k in n.children)
        kids += "".join(f"<li class='note'>✗ <a href='#{uid}-p{p.number}'>proposal {_e(p.transformation_id or p.number)}"
                        f"</a> rejected (minibatch {fmt(p.minibatch_score)}"
                        + (f" vs parent {fmt(p.parent_score)}" if p.parent_score is not None else "") + ")</li>"
                        for p in n.rejected)
        label = f"<a href='#{uid}-c{n.candidate.index}'>{_e(lineage_label(ex, n, markdown=False))}</a>"
        return f"<li>{label}" + (f"<ul class='tree'>{kids}</ul>" if kids else "") + "</li>"

    roots = ex.lineage()
    if not roots:
        return ""
    return ("<h4>Lineage</h4><p class='note'>Each candidate under the parent it was made from, with the proposal "
            f"that made it; rejected proposals marked ✗.</p><ul class='tree'>{''.join(node(r) for r in roots)}</ul>")


def _mipro(ex: Exploration) -> str:
    m = ex.mipro
    if m is None:
        return ""
    grid = m.grid()
    parts = ["<h4>MIPRO: instructions × demo sets</h4>"]
    if m.chosen is not None:
        parts.append(f"<p>Chosen: instruction {fmt(m.chosen[0])}, demo set {fmt(m.chosen[1])}"
                     + (f", held-out {fmt(m.chosen_test)}" if m.chosen_test is not None else "") + "</p>")
    if grid:
        instructions = sorted({i for i, _ in grid} | {i for i, _ in m.full_evals})
        demos = sorted({d for _, d in grid} | {d for _, d in m.full_evals})
        head = "<tr><th scope='col'>instruction \\ demo set</th>" + "".join(
            f"<th scope='col'>{d}</th>" for d in demos) + "</tr>"
        rows = []
        for i in instructions:
            cells = []
            for d in demos:
                mean, n = grid.get((i, d), (None, 0))
                full = m.full_evals.get((i, d))
                text = (f"{fmt(mean, 2)} ×{n}" if n else "—") + (f"<br>full {fmt(full, 2)}" if full is not None else "")
                chosen = m.chosen == (i, d)
                cells.append(f"<td class='own'>{text} ✓</td>" if chosen else f"<td>{text}</td>")
            rows.append(f"<tr><th scope='row'>{i}{' (original)' if i == 0 else ''}</th>{''.join(cells)}</tr>")
        parts.append("<p class='note'>Mean minibatch score × trials, full-evaluation score; ✓ the chosen pair.</p>"
                     f"<div class='scroll'><table>{head}{''.join(rows)}</table></div>")
    trials = "".join(f"<tr><td>{t.number}</td><td>{fmt(t.iteration)}</td><td>{fmt(t.instruction)}</td>"
                     f"<td>{fmt(t.demo_set)}</td><td>{fmt(t.score)}</td><td>{fmt(t.num_seeds)}</td></tr>"
                     for t in m.trials)
    parts.append(f"<details><summary>{len(m.trials)} trials</summary><table><tr><th scope='col'>trial</th>"
                 "<th scope='col'>iteration</th><th scope='col'>instruction</th><th scope='col'>demo set</th>"
                 f"<th scope='col'>minibatch score</th><th scope='col'>seeds</th></tr>{trials}</table></details>")
    if m.instructions:
        items = "".join(f"<li>instruction {i}<pre>{_e(text)}</pre></li>" for i, text in sorted(m.instructions.items()))
        parts.append(f"<details><summary>{len(m.instructions)} proposed instructions</summary><ul>{items}</ul></details>")
    return "".join(parts)


#: open the candidate a link or a Pareto point names (its ``<details>``), highlight its row and move the focus
#: there; the points of a plot are one Tab stop (roving tabindex) and keys they handle stop at the view
_SCRIPT = """(() => {
  const root = document.currentScript && document.currentScript.parentElement;
  if (!root) return;
  const open = (id) => {
    const target = root.querySelector("[id='" + id + "']");
    if (!target) return false;
    const box = target.closest("details");
    if (box) box.open = true;
    root.querySelectorAll("tr.hit").forEach((row) => row.classList.remove("hit"));
    const row = target.closest("tr");
    if (row) row.classList.add("hit");
    target.focus({preventScroll: true});
    target.scrollIntoView({block: "nearest"});
    return true;
  };
  const points = (svg) => Array.from(svg.querySelectorAll("g.point")).sort((a, b) => a.dataset.order - b.dataset.order);
  const rove = (from, to) => { from.setAttribute("tabindex", "-1"); to.setAttribute("tabindex", "0"); to.focus(); };
  for (const svg of root.querySelectorAll("svg.synth-pareto")) {
    const all = points(svg);
    const best = svg.querySelector("g.point .pt.best");
    for (const p of all) {
      p.setAttribute("role", "button");
      p.setAttribute("aria-label", p.querySelector("title").textContent);
      p.setAttribute("tabindex", "-1");
    }
    if (all.length) (best ? best.parentNode : all[0]).setAttribute("tabindex", "0");
  }
  // JupyterLab skips its shortcuts for a key whose target (the focused element itself) carries this attribute
  for (const el of root.querySelectorAll("a, summary, [tabindex], g.point")) el.setAttribute("data-lm-suppress-shortcuts", "true");
  const step = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1};
  root.addEventListener("keydown", (event) => {
    const point = event.target.closest && event.target.closest("g.point");
    if (!point || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Enter" || event.key === " ") {
      open(point.dataset.target);
    } else if (event.key in step || event.key === "Home" || event.key === "End") {
      const all = points(point.ownerSVGElement);
      const i = all.indexOf(point);
      const j = event.key === "Home" ? 0 : event.key === "End" ? all.length - 1
        : Math.min(all.length - 1, Math.max(0, i + step[event.key]));
      rove(point, all[j]);
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  });
  root.addEventListener("click", (event) => {
    const point = event.target.closest && event.target.closest("g.point");
    if (point) {
      const current = point.ownerSVGElement.querySelector("g.point[tabindex='0']");
      if (current) rove(current, point);
      open(point.dataset.target);
      return;
    }
    const link = event.target.closest && event.target.closest("a[href^='#__ID__-']");
    if (link && open(link.getAttribute("href").slice(1))) event.preventDefault();
  });
})();"""


def explorer_html(ex: Exploration) -> str:
    uid = f"synth-ex-{uuid.uuid4().hex[:10]}"
    notes = "".join(f"<p class='note'>{_e(n)}</p>" for n in ex.notes)
    plots = [pareto_svg(ex, axis, uid) for axis in ("length", "rollouts")]
    pareto = ""
    if any(plots):
        front = ", ".join(f"#{i}" for i in ex.frontier("length")) or "—"
        pareto = (f"<h4>Pareto view</h4><p class='note'>Every candidate's search score (validation seeds) against its prompt length "
                  f"and against the rollouts spent when it was found; the dashed line is the frontier (■ baseline, "
                  f"▲ best). Select a point to open its prompt: Tab reaches a plot, the arrow keys move between its "
                  f"points, Enter opens one. Frontier by length: {front}.</p>"
                  f"<div class='plots'>{''.join(p for p in plots if p)}</div>")
    diff = ex.baseline_to_best()
    diff_part = f"<h4>Baseline → best prompt (best by search score)</h4>{diff_html(diff)}" if diff else ""
    body = (f"<h3>{_e(ex.summary_line())}</h3><p class='note'>{_e(ex.best_note())}</p>{notes}{pareto}{_candidates(ex, uid)}{_wins(ex, uid)}"
            f"{_lineage(ex, uid)}{_rejected(ex, uid)}{diff_part}{_mipro(ex)}")
    return no_math_html(
        f"<div class='synth-explorer' id='{uid}' role='region' aria-label='Prompt-learning explorer for job "
        f"{_e(ex.job_id)}' data-job='{_e(ex.job_id)}'>"
        f"<style>{_CSS.format(id=uid)}</style><a class='skip' href='#{uid}-end'>Skip the explorer</a>{body}"
        f"<div id='{uid}-end' class='note' tabindex='-1'>End of the explorer.</div>"
        f"<script>{_SCRIPT.replace('__ID__', uid)}</script></div>")
