"""The explorer as Markdown: what a saved notebook shows outside Jupyter and what an export writes.

Diffs use wdiff marks (``[-removed-]``, ``{+added+}``) inside a fenced block, which read the same in a
terminal, on GitHub and in Jupyter, whatever characters the prompt contains. Every string the backend sent
(roles, origins, ids, seeds, prompt text) is key-shape masked, then written as literal text
(``synth_nb.markup``), never as Markdown or HTML of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth_nb.flows.prompt_learning.explorer_model import Exploration, LineageNode
from synth_nb.flows.prompt_learning.key_shapes import mask_key_shapes
from synth_nb.flows.prompt_learning.prompt_diff import MessageDiff
from synth_nb.markup import md_block, md_code, md_text

__all__ = ["MAX_ROWS", "diff_markdown", "explorer_markdown", "fmt", "lineage_label"]

#: candidates listed in tables (the best, the baseline and the highest scores first); the rest are counted
MAX_ROWS = 40
#: seeds shown as columns of the win matrix in Markdown (wider matrices are summarised per candidate)
MAX_SEED_COLUMNS = 24


def fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "—"}[value]
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _t(value: Any) -> str:
    """Backend text as Markdown inline text (a cell, a sentence), key shapes masked."""
    return md_text(mask_key_shapes(str(value)))


def diff_markdown(diffs: Sequence[MessageDiff], *, title: str = "Baseline → best prompt") -> list[str]:
    """One fenced wdiff block per message, changed ones first; unchanged messages are only named."""
    if not diffs:
        return []
    lines = [f"## {title}", "", "Word-level changes per message: `[-removed-]`, `{+added+}`.", ""]
    for d in diffs:
        label = f"**{_t(d.role)}**" + (f" ({md_code(mask_key_shapes(d.name))})" if d.name else "")
        if not d.changed:
            lines += [f"{label}: unchanged", ""]
            continue
        lines += [f"{label}: +{d.words('added')} / −{d.words('removed')} words", "", md_block(mask_key_shapes(d.wdiff())), ""]
    return lines


def shown_candidates(ex: Exploration) -> list[int]:
    """The candidates a table lists: baseline and best first, then by score, at most ``MAX_ROWS``."""
    order = sorted(ex.candidates, key=lambda c: (c.index not in (ex.baseline, ex.best), -(c.score or -1.0), c.index))
    return sorted(c.index for c in order[:MAX_ROWS])


def lineage_label(ex: Exploration, node: LineageNode, *, markdown: bool = True) -> str:
    """``#3 · reflection · of #1 · score 0.570 · …``: as Markdown (escaped, the marks in bold) or as plain text
    (``markdown=False``, for a caller that escapes it for where it lands)."""
    c = node.candidate
    parts = [f"#{c.index}", c.origin]
    if c.parents:
        parts.append("of " + " + ".join(f"#{p}" for p in c.parents))
    parts.append(f"score {fmt(c.score)}")
    p = c.proposal
    if p is not None:
        parts.append(f"proposal {p.transformation_id or p.number}: minibatch {fmt(p.minibatch_score)}, "
                     f"{'accepted' if p.accepted else 'accepted: unknown' if p.accepted is None else 'rejected'}")
    if c.rollouts is not None:
        parts.append(f"after {c.rollouts} rollouts")
    marks = [m for m, on in (("baseline", c.index == ex.baseline), ("best", c.index == ex.best)) if on]
    said = f"({', '.join(marks)})" if marks else ""
    if not markdown:
        return " · ".join(parts) + (f" {said}" if said else "")
    return _t(" · ".join(parts)) + (f" **{said}**" if said else "")


def _lineage(ex: Exploration) -> list[str]:
    lines: list[str] = []

    def walk(node: LineageNode, depth: int) -> None:
        lines.append(f"{'  ' * depth}- {lineage_label(ex, node)}")
        for child in node.children:
            walk(child, depth + 1)
        for p in node.rejected:
            lines.append(f"{'  ' * (depth + 1)}- ✗ proposal {_t(p.transformation_id or p.number)} rejected "
                         f"(minibatch {fmt(p.minibatch_score)})")

    for root in ex.lineage():
        walk(root, 0)
    return ["## Lineage", "", "Each candidate under the parent it was made from; rejected proposals marked ✗.", "",
            *lines] if lines else []


def _candidates(ex: Exploration) -> list[str]:
    shown = set(shown_candidates(ex))
    front = set(ex.frontier("length")) | set(ex.frontier("rollouts"))
    lines = ["## Candidates", "",
             "| # | Origin | Parents | Search score (validation seeds) | Held-out score (unseen seeds) | "
             "Minibatch score (proposal check) | ≈ Tokens | Rollouts | Seeds owned | Frontier |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in ex.rows():
        if row["candidate"] not in shown:
            continue
        mark = " (baseline)" if row["baseline"] else " (best by search score)" if row["best"] else ""
        lines.append(f"| {row['candidate']}{mark} | {_t(row['origin'])} | "
                     f"{', '.join(f'#{p}' for p in row['parents']) or '—'} | {fmt(row['score'])} | "
                     f"{fmt(row['heldout'])} | {fmt(row['minibatch_score'])} | {fmt(row['prompt_tokens'])} | "
                     f"{fmt(row['rollouts'])} | {row['seeds_owned']} | {'yes' if row['candidate'] in front else ''} |")
    if len(shown) < len(ex.candidates):
        lines += ["", f"{len(ex.candidates) - len(shown)} more candidates in `job.candidates_df()`."]
    return lines


def _wins(ex: Exploration) -> list[str]:
    wins = ex.wins()
    if not wins.seeds:
        return []
    lines = ["## Per-seed wins", "",
             "A candidate owns a validation seed when it has the best score on it (seeds every candidate "
             "scores the same are owned by none).", ""]
    shown = [i for i in wins.candidates if i in set(shown_candidates(ex))]
    if len(wins.seeds) <= MAX_SEED_COLUMNS:
        lines += ["| # | " + " | ".join(_t(s) for s in wins.seeds) + " |",
                  "|---|" + "---|" * len(wins.seeds)]
        for i in shown:
            cells = [fmt(wins.scores.get((i, s)), 2) + (" ★" if i in wins.owners.get(s, ()) else "")
                     for s in wins.seeds]
            lines.append(f"| {i} | " + " | ".join(cells) + " |")
        return [*lines, "", "★ owns the seed."]
    lines += ["| # | Seeds owned |", "|---|---|"]
    for i in shown:
        owned = wins.owned_by(i)
        lines.append(f"| {i} | {len(owned)}: {_t(', '.join(map(str, owned[:30])))}"
                     + (" …" if len(owned) > 30 else "") + " |")
    return lines


def _mipro(ex: Exploration) -> list[str]:
    m = ex.mipro
    if m is None:
        return []
    lines = ["## MIPRO search", ""]
    if m.chosen is not None:
        lines += [f"Chosen: instruction {fmt(m.chosen[0])}, demo set {fmt(m.chosen[1])}"
                  + (f" (held-out {fmt(m.chosen_test)})" if m.chosen_test is not None else ""), ""]
    grid = m.grid()
    if grid:
        instructions = sorted({i for i, _ in grid} | {i for i, _ in m.full_evals})
        demos = sorted({d for _, d in grid} | {d for _, d in m.full_evals})
        lines += ["| Instruction \\ demo set | " + " | ".join(str(d) for d in demos) + " |",
                  "|---|" + "---|" * len(demos)]
        for i in instructions:
            cells = []
            for d in demos:
                mean, n = grid.get((i, d), (None, 0))
                full = m.full_evals.get((i, d))
                text = f"{fmt(mean, 2)} ×{n}" if n else "—"
                cells.append(text + (f", full {fmt(full, 2)}" if full is not None else "")
                             + (" ✓" if m.chosen == (i, d) else ""))
            lines.append(f"| {i}{' (original)' if i == 0 else ''} | " + " | ".join(cells) + " |")
        lines += ["", "Cells: mean minibatch score × trials, full-evaluation score; ✓ the chosen pair.", ""]
    lines += [f"{len(m.trials)} trials; best minibatch score {fmt(max((t.score for t in m.trials), default=None))}."]
    for i, text in sorted(m.instructions.items()):
        lines.append(f"- instruction {i}: {_t((text.splitlines() or [''])[0][:120])}")
    return lines


def explorer_markdown(ex: Exploration) -> str:
    parts: list[list[str]] = [[f"# Prompt-learning explorer: {md_code(ex.job_id)}", "", _t(ex.summary_line()), "",
                               _t(ex.best_note()), ""]]
    if ex.notes:
        parts.append([*(f"> {_t(note)}" for note in ex.notes), ""])
    front = ex.frontier("length")
    if front:
        parts.append([f"Pareto frontier (search score vs ≈ tokens): {', '.join(f'#{i}' for i in front)}.", ""])
    parts += [_candidates(ex), [""], _wins(ex), [""], _lineage(ex), [""], diff_markdown(ex.baseline_to_best() or []),
              _mipro(ex)]
    text = "\n".join(line for part in parts for line in part).rstrip() + "\n"
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text
