"""The comparison as HTML (the notebook), Markdown (exports) and plain text (the terminal).

The HTML is one self-contained output with no script, so a saved notebook keeps it: a PNG per progress
axis and a radio group that shows one at a time (where the browser supports ``:has``; otherwise all are
shown, one under the other; its keys are its own, not the notebook's), then the final-metrics and config-difference tables.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from typing import Any

from synth_nb.comparison.curves import AXES, Axis
from synth_nb.comparison.table import MISSING, shown_value
from synth_nb.markup import html_text, md_code, md_text, no_math_html
from synth_nb.untrusted import inert

__all__ = ["COLUMNS", "comparison_html", "comparison_markdown", "comparison_text", "metric_cell"]

#: final-metrics columns: (row key, heading); each score beside what it was measured on
COLUMNS = (("run", "Run"), ("flow", "Flow"), ("status", "Status"), ("stopped", "Why it stopped"),
           ("metric", "Headline metric"), ("final", "Final (last value)"), ("best", "Best during the run"),
           ("best_on", "Best measured on"), ("held_out", "Held-out result"), ("held_out_on", "Held-out measured on"),
           ("steps", "Steps"), ("rollouts", "Rollouts"), ("tokens", "Tokens"), ("duration_s", "Duration (s)"))
#: what each score column measures, said above the table (and in the Markdown copy)
SCORES_NOTE = ("Each score is one measure, beside the data it was measured on, never one for the other. Final and "
               "Best during the run are the headline metric as the run itself scored it (prompt learning: the search "
               "score on its validation seeds; RL and SFT: the training rollouts and batches). Held-out result is "
               "measured on data the run did not learn from (prompt learning: the chosen prompt on the held-out test "
               "pool after the search; RL: the evaluation seeds; SFT: the validation split).")
#: config keys listed in a table (the rest are counted; all of them are in ``config_df()``)
MAX_KEYS = 80

_CSS = """
#{id} {{font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px;}}
#{id} h3 {{font-size: 15px; margin: 4px 0;}} #{id} h4 {{font-size: 13px; margin: 10px 0 4px;}}
#{id} fieldset {{border: 0; padding: 0; margin: 4px 0;}} #{id} fieldset label {{margin-right: 12px;}}
#{id} figure {{margin: 4px 0;}} #{id} img {{max-width: 100%;}}
#{id} table {{border-collapse: collapse;}} #{id} th, #{id} td {{border: 1px solid #8884; padding: 2px 6px; text-align: left;}}
#{id} .note {{opacity: .8; font-style: italic;}} #{id} .scroll {{overflow-x: auto; max-width: 100%;}}
{hide}
"""


def metric_cell(key: str, value: Any) -> str:
    if value is None:
        return MISSING
    if key == "duration_s":
        return f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int) and key in ("tokens", "rollouts", "steps"):
        return f"{value:,}"
    return str(value)


def _others(row: dict[str, Any]) -> str:
    return "; ".join(f"{k.removesuffix(' (final)')} {metric_cell('final', v)}" for k, v in row.items()
                     if k.endswith(" (final)"))


def comparison_html(title: str, rows: Sequence[dict[str, Any]], differences: Sequence[tuple[str, list[Any]]],
                    labels: Sequence[str], sources: Sequence[str], charts: dict[Axis, tuple[bytes, str]],
                    notes: Sequence[str], first: Axis) -> str:
    uid = f"synth-cmp-{uuid.uuid4().hex[:10]}"
    e = html_text
    hide = "\n".join(f"#{uid}:has(#{uid}-{a}:checked) figure:not(.fig-{a}) {{display: none;}}" for a in charts)
    parts = [f"<h3>{e(title)}</h3>", *(f"<p class='note'>{e(n)}</p>" for n in notes)]
    if charts:
        # data-lm-suppress-shortcuts (on the focused element itself): the arrow keys switch the axis
        # instead of moving the notebook's active cell
        radios = "".join(f"<input type='radio' data-lm-suppress-shortcuts name='{uid}-axis' id='{uid}-{a}' value='{a}'"
                         f"{' checked' if a == first else ''}><label for='{uid}-{a}'>{e(AXES[a])}</label>"
                         for a in charts)
        figures = "".join(f"<figure class='fig-{a}' data-axis='{a}'><img alt='{e(alt)}' src='data:image/png;base64,"
                          f"{base64.b64encode(png).decode('ascii')}'><figcaption class='note'>{e(alt)}</figcaption>"
                          f"</figure>" for a, (png, alt) in charts.items())
        parts += [f"<fieldset><legend>Progress axis</legend>{radios}</fieldset>", figures]
    head = "".join(f"<th scope='col'>{e(h)}</th>" for _, h in COLUMNS) + "<th scope='col'>Other final values</th>"
    body = "".join("<tr>" + "".join(f"<td>{e(metric_cell(k, r.get(k)))}</td>" for k, _ in COLUMNS)
                   + f"<td>{e(_others(r))}</td></tr>" for r in rows)
    parts.append(f"<h4>Final metrics</h4><p class='note'>{e(SCORES_NOTE)}</p>"
                 f"<div class='scroll'><table><tr>{head}</tr>{body}</table></div>")
    parts.append(_differences_html(differences, labels, sources))
    return no_math_html(f"<div class='synth-compare' id='{uid}' role='region' aria-label='{e(title)}'>"
                        f"<style>{_CSS.format(id=uid, hide=hide)}</style>{''.join(parts)}</div>")


def _differences_html(differences: Sequence[tuple[str, list[Any]]], labels: Sequence[str],
                      sources: Sequence[str]) -> str:
    e = html_text
    if not differences:
        return ("<h4>Config differences</h4><p class='note'>No differing keys in what was sent (the submitted plans, "
                "flags included, are compared between runs of the same flow, when at least two of them are known).</p>")
    head = "<th scope='col'>Key</th>" + "".join(f"<th scope='col'>{e(label)}</th>" for label in labels)
    source = "<tr><th scope='row'>(config read from)</th>" + "".join(f"<td>{e(s)}</td>" for s in sources) + "</tr>"
    rows = "".join(f"<tr><th scope='row'><code>{e(key)}</code></th>"
                   + "".join(f"<td>{e(shown_value(v))}</td>" for v in values) + "</tr>"
                   for key, values in differences[:MAX_KEYS])
    more = (f"<p class='note'>{len(differences) - MAX_KEYS} more differing keys in <code>config_df()</code>.</p>"
            if len(differences) > MAX_KEYS else "")
    return (f"<h4>Config differences ({len(differences)} keys)</h4><p class='note'>Keys whose values differ "
            f"between runs of the same flow, in the plans they were submitted with (flags and overrides included; "
            f"the config files where a run was not sent from this folder); — the run lacks the key, · a run of "
            f"another flow.</p>"
            f"<div class='scroll'><table><tr>{head}</tr>{source}{rows}</table></div>{more}")


def _table(headings: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table of cells already written as Markdown (``md_text``, ``md_code``)."""
    lines = ["| " + " | ".join(md_text(h) for h in headings) + " |", "|" + "---|" * len(headings)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def comparison_markdown(title: str, rows: Sequence[dict[str, Any]], differences: Sequence[tuple[str, list[Any]]],
                        labels: Sequence[str], notes: Sequence[str]) -> str:
    lines = [f"# {md_text(title)}", "", *(f"> {md_text(n)}" for n in notes), ""]
    lines += ["## Final metrics", "", SCORES_NOTE, ""]
    lines += _table([h for _, h in COLUMNS] + ["Other final values"],
                    [[md_text(metric_cell(k, r.get(k))) for k, _ in COLUMNS] + [md_text(_others(r))] for r in rows])
    if differences:
        lines += ["", f"## Config differences ({len(differences)} keys)", ""]
        lines += _table(["Key", *labels], [[md_code(k, cell=True), *(md_text(shown_value(v)) for v in vals)]
                                           for k, vals in differences[:MAX_KEYS]])
    return "\n".join(lines).rstrip() + "\n"


def comparison_text(title: str, rows: Sequence[dict[str, Any]], differences: Sequence[tuple[str, list[Any]]],
                    labels: Sequence[str], notes: Sequence[str]) -> str:
    """Aligned columns for a terminal."""
    def grid(headings: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
        widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headings)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return [fmt.format(*headings), fmt.format(*("-" * w for w in widths)), *(fmt.format(*r) for r in body)]

    keys = [k for k, _ in COLUMNS]
    out = [inert(title), *(f"note: {inert(n)}" for n in notes), ""]  # cells and notes hold the backend's words
    out += grid([h for k, h in COLUMNS if k in keys], [[inert(metric_cell(k, r.get(k))) for k in keys] for r in rows])
    if differences:
        out += ["", f"config differences ({len(differences)} keys):"]
        out += grid(["key", *map(inert, labels)],
                    [[inert(k), *(inert(shown_value(v, 40)) for v in vals)] for k, vals in differences[:MAX_KEYS]])
    return "\n".join(out) + "\n"
