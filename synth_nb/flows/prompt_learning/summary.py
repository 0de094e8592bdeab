"""``summary.md`` for a finished prompt-learning (GEPA / MIPRO) job, with its optimisation curve.

Works on what any backend returns — the status document, the event log and
the metric points — so it serves the hosted backend, the local one and recordings alike. Every string
that looks like a credential, and every value found under a key-like field, is masked first; every string
the backend sent is then written as literal text (``synth_nb.markup``): a table cell or sentence escaped,
prompt text in a fenced block, never markup of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.flows.artifacts import FinishedJob, ending_rows, unreadable_metrics, unreadable_metrics_note
from synth_nb.flows.prompt_learning.curve import curve_png
from synth_nb.flows.prompt_learning.explorer_events import explore
from synth_nb.flows.prompt_learning.explorer_markdown import diff_markdown
from synth_nb.flows.prompt_learning.key_shapes import mask_key_shapes
from synth_nb.flows.prompt_learning.scores import instance_values, job_scores, score_value
from synth_nb.markup import md_block, md_code, md_text
from synth_nb.records import UNPARSED_EVENT_TYPE
from synth_nb.secrets import mask_text

__all__ = ["CURVE_NAME", "SUMMARY_NAME", "Summary", "job_summary", "render_summary", "write_summary"]

SUMMARY_NAME = "summary.md"
CURVE_NAME = "summary_curve.png"
_SECRET_FIELD = re.compile(r"(api_?key|secret|password|authorization|bearer|access_token|refresh_token)$", re.I)


@dataclass
class Summary:
    markdown: str
    curve_png: bytes | None


def _plain(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    return dump() if callable(dump) else dict(vars(item))


def _secret_values(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and _SECRET_FIELD.search(str(key)) and len(value) >= 4:
                found.add(value)
            else:
                _secret_values(value, found)
    elif isinstance(node, list):
        for value in node:
            _secret_values(value, found)


@dataclass(frozen=True)
class _Shown:
    """Backend values as Markdown, each masked first (secret values, key shapes): escaping would hide them
    from the masks. Only what is shown is masked, not every event the job holds."""

    secrets: tuple[str, ...]

    def _mask(self, value: Any) -> str:
        text = str(value)
        if "@" in text or any(secret in text for secret in self.secrets):  # what mask_text would change
            text = mask_text(text, self.secrets)
        return mask_key_shapes(text)

    def text(self, value: Any) -> str:
        return md_text(self._mask(value))

    def code(self, value: Any, *, cell: bool = False) -> str:
        return md_code(self._mask(value), cell=cell)

    def block(self, value: Any) -> str:
        return md_block(self._mask(value))

    def count(self, value: Any) -> str:
        """A whole count with thousands separators; anything else the backend put there, as text."""
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else self.text(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _num(value: Any, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if _is_number(value) else "n/a"


class _Log:
    """Events by type (last one wins for ``last``)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = sorted(events, key=lambda e: e.get("seq") or 0)

    def all(self, *types: str) -> list[dict[str, Any]]:
        return [e.get("data") or {} for e in self.events if e.get("type") in types]

    def last(self, *types: str) -> dict[str, Any]:
        found = self.all(*types)
        return found[-1] if found else {}


def _algorithm(status: dict[str, Any], log: _Log) -> str:
    algo = status.get("algorithm")
    if not algo:
        types = " ".join(str(e.get("type")) for e in log.events)
        algo = "gepa" if "gepa" in types else "mipro" if "mipro" in types else None
    return str(algo).upper() if algo else "prompt learning"


def _scores(status: dict[str, Any], log: _Log) -> tuple[float | None, float | None]:
    scores = job_scores(status, log.events)
    return scores.baseline, scores.best


def _overview(job_id: str, status: dict[str, Any], log: _Log, algorithm: str, show: _Shown) -> list[str]:
    policy = log.last("prompt.learning.policy.ready")
    proposer = log.last("prompt.learning.proposer.selected")
    task = log.last("prompt.learning.task_app.ready")
    done = log.last("prompt.learning.completed")
    rows = [("Job", show.code(job_id, cell=True)), ("Status", show.text(status.get("status", "unknown"))),
            ("Algorithm", show.text(algorithm))]
    model = policy.get("model") or done.get("policy_model")
    if model or policy:
        rows.append(("Policy", f"{show.text(model or 'n/a')} ({show.text(policy.get('policy', done.get('policy', 'n/a')))})"))
    if proposer or done.get("proposer"):
        rows.append(("Proposer", f"{show.text(proposer.get('proposer', done.get('proposer')))} "
                                 f"({show.text(proposer.get('model') or done.get('proposer_model') or 'n/a')})"))
    if task:
        rows.append(("Task app", f"{show.text(task.get('task_app_url'))} "
                                 f"({show.text(task.get('task_id') or task.get('env_name'))})"))
    for label, key in (("Created", "created_at"), ("Started", "started_at"), ("Finished", "finished_at")):
        if status.get(key):
            rows.append((label, show.text(status[key])))
    seconds = done.get("elapsed_seconds") or log.last("prompt.learning.billing.end").get("seconds")
    if _is_number(seconds):
        rows.append(("Optimisation time", f"{seconds:.1f} s"))
    return ["| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows]]


def _score_section(baseline: float | None, best: float | None, status: dict[str, Any], log: _Log) -> list[str]:
    lines = ["## Scores", "", "| | Score |", "|---|---|", f"| Baseline | {_num(baseline)} |", f"| Best | {_num(best)} |"]
    if isinstance(baseline, int | float) and isinstance(best, int | float):
        relative = f"{(best - baseline) / baseline * 100:+.1f}%" if baseline > 0 else "n/a"
        lines.append(f"| Improvement | {best - baseline:+.4f} absolute ({(best - baseline) * 100:+.1f} points), "
                     f"{relative} relative |")
    if status.get("best_train_score") is not None:
        lines.append(f"| Search score, baseline → best | {_num(status.get('baseline_train_score'))} → "
                     f"{_num(status.get('best_train_score'))} |")
    seeds = (log.last("prompt.learning.validation.summary").get("baseline") or {}).get("seeds")
    if seeds:
        lines += ["", f"Baseline and best are scored on {len(seeds)} held-out seeds after the search."]
    return lines


def _best_prompt(status: dict[str, Any], log: _Log, show: _Shown) -> list[str]:
    prompt = (log.last("prompt.learning.best.prompt").get("best_prompt") or status.get("best_prompt")
              or log.last("prompt.learning.mipro.complete").get("best_prompt") or {})
    sections = prompt.get("sections") if isinstance(prompt, dict) else None
    if not sections:
        return []
    lines = ["## Best prompt", ""]
    for section in sections:
        name = section.get("name")
        lines += [f"**{show.text(section.get('role', 'message'))}**" + (f" ({show.code(name)})" if name else ""), "",
                  show.block(section.get("content", "")), ""]
    return lines


def _wins(candidates: list[dict[str, Any]]) -> dict[int, int]:
    by_seed: dict[Any, dict[int, float]] = {}
    for i, cand in enumerate(candidates):
        for seed, score in zip(cand.get("seeds") or [], instance_values(cand) or [], strict=False):
            by_seed.setdefault(seed, {})[i] = float(score)
    wins = {i: 0 for i in range(len(candidates))}
    for scores in by_seed.values():
        top, low = max(scores.values()), min(scores.values())
        if top > low:
            for i, value in scores.items():
                wins[i] += value == top
    return wins


def _candidates(log: _Log, show: _Shown) -> list[str]:
    attempted = log.last("prompt.learning.final.results").get("attempted_candidates") or []
    if not attempted:
        return []
    wins = _wins(attempted)
    order = sorted(range(len(attempted)), key=lambda i: -(score_value(attempted[i]) or -1.0))
    lines = ["## Top candidates", "",
             "| Rank | Candidate | Search score | Held-out | Length | Parents | Generation | Per-seed wins |",
             "|---|---|---|---|---|---|---|---|"]
    for rank, i in enumerate(order[:10], start=1):
        c = attempted[i]
        parents = ", ".join(str(p) for p in c.get("parents") or []) or "—"
        origin = c.get("origin") or ""
        if "instruction_index" in c:
            parents, origin = f"instr {c['instruction_index']} / demos {c.get('demo_index')}", "mipro"
        lines.append(f"| {rank} | {show.text(c.get('candidate_index', i))} | {_num(score_value(c))} | "
                     f"{_num(c.get('heldout_accuracy'))} | {show.text(c.get('prompt_length', 'n/a'))} | "
                     f"{show.text(parents)} | {show.text(c.get('generation', 'n/a'))} {show.text(origin)} | "
                     f"{wins.get(i, 0)} |")
    lines += ["", f"{len(attempted)} candidates in total. Per-seed wins: validation seeds on which the candidate "
              "has the best score while some other candidate scored lower."]
    return lines


def _optimized(log: _Log, show: _Shown) -> list[str]:
    """``final.results``' optimized candidates (the Pareto front), as 0.2.24's results file lists them."""
    optimized = [c for c in log.last("prompt.learning.final.results").get("optimized_candidates") or []
                 if isinstance(c, dict)]
    if not optimized:
        return []
    lines = ["## Optimized candidates", "", "| Rank | Score | Length | Kind | N |", "|---|---|---|---|---|"]
    for i, c in enumerate(optimized[:10], start=1):
        raw = c.get("score")
        score: dict[str, Any] = raw if isinstance(raw, dict) else {}
        scores = instance_values(score) if instance_values(score) is not None else instance_values(c)
        accuracy = score_value(score) if score else score_value(c)
        length = score.get("prompt_length", c.get("prompt_length", "n/a"))
        lines.append(f"| {show.text(c.get('rank', i))} | {_num(accuracy)} | {show.text(length)} "
                     f"| {show.text(c.get('payload_kind', 'n/a'))} | {len(scores) if isinstance(scores, list) else 'n/a'} |")
    return lines


def _unparsed(log: _Log, show: _Shown) -> list[str]:
    kept = [e for e in log.events if e.get("type") == UNPARSED_EVENT_TYPE]
    if not kept:
        return []
    reasons = sorted({str((e.get("data") or {}).get("reason", "unknown shape")) for e in kept})
    return [f"**Note:** {len(kept)} item(s) the backend sent could not be interpreted; they are kept as "
            f"`{UNPARSED_EVENT_TYPE}` events ({show.text('; '.join(reasons))})."]


def _proposals(log: _Log, show: _Shown) -> list[str]:
    gepa = log.all("gepa.transformation.proposed")
    scored = log.all("prompt.learning.proposal.scored")
    mipro = log.all("mipro.instruction.proposed")
    if not (gepa or mipro):
        return []
    lines = ["## Proposals", ""]
    if gepa:
        accepted = sum(1 for s in scored if s.get("accepted"))
        lines += [f"{len(gepa)} GEPA transformations proposed, {accepted} accepted after the minibatch check.", "",
                  "| # | Parent | Minibatch score | Accepted | New text (end) |", "|---|---|---|---|---|"]
        verdicts = {s.get("proposal"): s for s in scored}
        for n, prop in enumerate(gepa[:15], start=1):
            verdict = verdicts.get(n, {})
            text = str(prop.get("transformation_text", ""))
            lines.append(f"| {n} | {show.text(prop.get('parent_id', '—'))} | {_num(verdict.get('score'), 3)} | "
                         f"{'yes' if verdict.get('accepted') else 'no'} | {show.text(text[-90:])} |")
    if mipro:
        lines += [f"{len(mipro)} MIPRO instructions proposed (besides the original).", ""]
        for prop in mipro[:10]:
            text = str(prop.get("instruction_text", ""))
            lines.append(f"- {show.code(prop.get('proposal_id', prop.get('instruction_id')))} ({len(text)} chars): "
                         f"{show.text(text.splitlines()[-1][:100]) if text.strip() else ''}")
    return lines


def _run_section(log: _Log, show: _Shown, ending: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Why the job stopped and what it used beside the estimate it was sent with (``ending``, the job's own
    words for every door), else the completion event's figures as they are."""
    done = log.last("prompt.learning.completed")
    if ending:
        rows = [(label.capitalize(), show.text(text)) for label, text in ending]
        if _is_number(done.get("rollouts_per_minute")):
            rows.append(("Throughput", f"{done['rollouts_per_minute'] / 60:.1f} rollouts/s"))
        return ["## Run", "", "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows]]
    progress = log.all("prompt.learning.progress")
    rollouts = done.get("rollouts_completed", max((p.get("rollouts_completed") or 0 for p in progress), default=None))
    total_usd = log.last("prompt.learning.billing.end").get("total_usd", done.get("total_usd"))
    tokens = done.get("token_count_total")
    rows = [("Rollouts", (show.count(rollouts) if rollouts is not None else "n/a")
             + (f" (+{show.count(done['heldout_rollouts'])} held-out)" if done.get("heldout_rollouts") else ""))]
    if tokens is not None:
        rows.append(("Tokens", f"{show.count(tokens)} (policy {show.count(done.get('token_count_rollouts', 0))}, "
                               f"proposer {show.count(done.get('token_count_mutation', 0))})"))
    rows.append(("Cost", f"\\${total_usd:.4f}" if _is_number(total_usd) else "unknown"))
    if _is_number(done.get("rollouts_per_minute")):
        rows.append(("Throughput", f"{done['rollouts_per_minute'] / 60:.1f} rollouts/s"))
    rows.append(("Finish reason", show.text(done.get("finish_reason", "n/a"))))
    return ["## Run", "", "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows]]


def render_summary(status_doc: dict[str, Any], events: list[Any], metrics: list[Any], *, job_id: str,
                   link_curve: bool = False, unreadable_metrics: Sequence[Mapping[str, Any]] = (),
                   ending: Sequence[tuple[str, str]] = (), draw_curve: bool = True) -> Summary:
    """Markdown summary and curve PNG; ``link_curve`` adds the curve as an image beside ``summary.md``;
    ``draw_curve=False`` leaves the PNG out (``curve_png`` None: a caller wanting the text alone skips
    matplotlib's drawing, a quarter of a second; the text is the same without ``link_curve``);
    ``unreadable_metrics``: the metric points the backend sent that could not be read (a note counts them);
    ``ending``: how the job ended (``flows.artifacts.ending_rows``), for the Run section."""
    status = dict(status_doc or {})
    event_dicts = [_plain(e) for e in events]
    metric_dicts = [_plain(m) for m in metrics]
    secrets: set[str] = set()
    _secret_values([status, event_dicts, metric_dicts], secrets)
    show = _Shown(tuple(sorted(secrets)))
    log = _Log(event_dicts)
    algorithm = _algorithm(status, log)
    baseline, best = _scores(status, log)
    png = curve_png(metric_dicts, log.events, title=f"{algorithm} optimisation — {job_id}") if draw_curve else None
    parts = [[f"# Prompt-learning summary: {show.code(job_id)}", ""], _overview(job_id, status, log, algorithm, show),
             [""], _score_section(baseline, best, status, log), [""], _best_prompt(status, log, show),
             diff_markdown(explore(log.events, metric_dicts, job_id=job_id).baseline_to_best() or []),
             _candidates(log, show), [""], _optimized(log, show), [""],
             _proposals(log, show), [""], _run_section(log, show, ending), [""], _unparsed(log, show)]
    if unreadable_metrics:
        parts.append(["", f"**Note:** {unreadable_metrics_note(unreadable_metrics)}."])
    if png is not None and link_curve:
        parts.append(["", "## Optimisation curve", "", f"![optimisation curve]({CURVE_NAME})"])
    if status.get("error"):
        parts.append(["", f"**Error:** {show.text(status['error'])}"])
    markdown = "\n".join(line for part in parts for line in part).rstrip() + "\n"
    # the prompt diff is the explorer's (it masks key shapes): known secret values are masked here as well
    markdown = mask_key_shapes(mask_text(markdown, show.secrets))
    return Summary(markdown=_collapse_blank_lines(markdown), curve_png=png)


def _collapse_blank_lines(markdown: str) -> str:
    """At most one blank line in a row, except inside fenced blocks (prompt text keeps its own)."""
    out: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        ticks = re.match(r"`{3,}", line)
        if ticks and (not fence or ticks.group(0) == fence and line.strip() == fence):
            fence = "" if fence else ticks.group(0)
        elif not fence and not line and out and not out[-1]:
            continue
        out.append(line)
    return "\n".join(out)


def job_summary(job: FinishedJob, *, link_curve: bool = False, draw_curve: bool = True) -> Summary:
    """The summary of a job (anything with ``status_doc``, ``events``, ``metrics`` and ``id``)."""
    return render_summary(dict(job.status_doc or {}), list(job.events), list(job.metrics), job_id=str(job.id),
                          link_curve=link_curve, unreadable_metrics=unreadable_metrics(job), ending=ending_rows(job),
                          draw_curve=draw_curve)


def write_summary(job: FinishedJob, folder: str | Path) -> Path:
    """Write ``summary.md`` (and ``summary_curve.png`` when there is a curve) into ``folder``."""
    summary = job_summary(job, link_curve=True)
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    (target / SUMMARY_NAME).write_text(summary.markdown, encoding="utf-8")
    if summary.curve_png is not None:
        (target / CURVE_NAME).write_bytes(summary.curve_png)
    return target / SUMMARY_NAME
