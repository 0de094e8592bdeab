"""Plain-text previews of prepared configs: what the terminal shows before ``Submit?`` and the magic prints where
widgets cannot render (nbconvert, a console), in the words the wizard uses.

Two forms: ``preview_text`` lays out every request's full payload (``--dry-run``, ``--verbose``, the magic);
``compact_text`` is the one-screen summary a terminal shows before ``Submit?`` (two GEPA jobs fit 80x24): per
config its flow, model, task app, uploaded files with their sizes, the rollouts it may run, its seed lists
folded, the masked keys and its warnings, then "N jobs → URL".

Everything shown here is already masked by the library (``plan.preview()``,
``SecretBundle.as_masked_dict()``); this module only lays it out (``preview_layout``).
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.errors import SynthNbError
from synth_nb.flows import get_flow
from synth_nb.flows.base import Workload
from synth_nb.pipeline.prepare import Prepared
from synth_nb.pipeline.preview_layout import payload_lines, payload_text, step_line, step_rows
from synth_nb.secrets import SecretBundle, mask_text

__all__ = ["compact_rows", "compact_text", "preview_text", "secrets_rows", "source_words", "warning_lines",
           "warnings_of"]

FOLDED_NOTE = "(long integer lists are folded; --dry-run --json prints them in full)"


def source_words(source: str, folder: Path | None = None) -> str:
    """Where a key came from as a phrase: "found in .env" (the file's path relative to ``folder``: the working
    folder, where ``--env-file .env`` was typed), "pasted into the wizard"…"""
    if source.startswith(".env:"):
        path = source[len(".env:"):]
        try:
            shown = os.path.relpath(path, folder) if folder is not None else path
        except ValueError:  # another drive (Windows)
            shown = path
        return f"found in {shown}"
    if source.startswith("modal:"):
        return f"found in Modal secret {source[len('modal:'):]}"
    if source.startswith("local backend"):  # "local backend (its example task apps)": what it is for
        detail = source[len("local backend"):].strip().removeprefix("(").removesuffix(")")
        return "provided by the embedded local backend" + (f" for {detail}" if detail else "")
    return {"environment": "found in the kernel's environment", "pasted": "pasted into the wizard"}.get(
        source, f"found in {source}")


def secrets_rows(bundle: SecretBundle | None, required: Iterable[str] = (),
                 folder: Path | None = None) -> list[dict[str, Any]]:
    """``[{"name", "masked", "source", "where", "found"}]`` for every key found, then each missing one.

    ``source`` is the library's label (``.env:/path/.env``); ``where`` says it in plain words.
    """
    if bundle is None:
        return []
    rows = [{"name": name, "masked": info["masked"], "source": info["source"],
             "where": source_words(info["source"], folder), "found": True}
            for name, info in bundle.as_masked_dict().items()]
    rows += [{"name": name, "masked": "", "source": "", "where": "", "found": False}
             for name in bundle.missing(required)]
    return rows


def warnings_of(item: Prepared) -> list[str]:
    """The plan's warnings (the config's own, ignored overrides…), or the config's when no plan was built."""
    if item.plan is not None:
        return list(item.plan.warnings)
    return list(item.config.warnings) if item.config is not None else []


def warning_lines(prepared: Sequence[Prepared]) -> list[str]:
    """``warning: sft.toml: unknown key … (did you mean 'n_epochs'?)``, one line per warning."""
    return [f"warning: {item.path.name}: {warning}" for item in prepared for warning in warnings_of(item)]


def preview_text(prepared: Sequence[Prepared], *, backend_url: str) -> str:
    """One block per config: flow, secrets (masked), warnings, first error or the requests and payload."""
    lines = [f"Backend: {backend_url}"]
    for item in prepared:
        lines.append("")
        config = item.config
        kind = ("not loaded: see the error below" if config is None
                else config.flow + (f"/{config.algorithm}" if config.algorithm else ""))
        lines.append(f"== {item.path.name}  ({kind})")
        folder = item.path.parent
        for row in secrets_rows(item.secrets, item.required, Path.cwd()):
            state = f"{row['masked']}  {row['where']}" if row["found"] else "MISSING"
            lines.append(f"   {row['name']}: {state}")
        for warning in warnings_of(item):
            lines.append(f"   warning: {warning}")
        if item.error is not None:
            lines.append(f"   error: {item.error}")
        elif item.plan is not None:
            lines.extend(f"   {i}. {step_line(row)}" for i, row in enumerate(step_rows(item.plan, folder), 1))
            payload = payload_lines(item.plan.preview())
            lines.append(payload_text(payload))
            if any("fold" in line for line in payload):
                lines.append(FOLDED_NOTE)
    return "\n".join(lines)


#: the compact preview's label column ("   task app: ")
_LABEL = 13
#: joins what a row must not break apart when it wraps ("4.7 KiB"); a space again once wrapped
_KEEP = "\u00a0"
#: a payload key whose integer list is a list of seeds (what ``fold_summary`` calls seeds)
_SEEDS = re.compile(r"seed|pool", re.I)


def _seed_lists(value: Any, key: str = "") -> Iterator[tuple[str, tuple[int, ...]]]:
    """Every integer list under a seed-like key of a payload, with its key."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _seed_lists(v, str(k))
    elif isinstance(value, list):
        if value and _SEEDS.search(key) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            yield key, tuple(value)
        else:
            for v in value:
                yield from _seed_lists(v, key)


def _folded(values: Sequence[int]) -> str:
    """``0…79 (80)``, ``3, 5, 8``, or ``0, 2, 4, …, 98 (50)``."""
    if len(values) <= 3:
        return ", ".join(map(str, values))
    if all(b - a == 1 for a, b in zip(values, values[1:], strict=False)):
        return f"{values[0]}…{values[-1]} ({len(values)})"
    return ", ".join(map(str, values[:3])) + f", …, {values[-1]} ({len(values)})"


def _short_source(source: str) -> str:
    """Where a key came from, in a word or a path: ``environment``, ``.env``, ``Modal secret X``…"""
    return source_words(source, Path.cwd()).removeprefix("found in ").removeprefix("the kernel's ")


def _keys_text(item: Prepared) -> str:
    """``SYNTH_API_KEY ••••1234 · ENVIRONMENT_API_KEY ••••5678 (environment)``, grouped by where each came from
    (``MISSING`` for a required key not found)."""
    by_source: dict[str, list[str]] = {}
    for row in secrets_rows(item.secrets, item.required, Path.cwd()):
        where = _short_source(row["source"]) if row["found"] else "MISSING"
        by_source.setdefault(where, []).append(f"{row['name']} {row['masked']}".rstrip())
    return "; ".join(" · ".join(names) + f" ({where})" for where, names in by_source.items())


def _workload(item: Prepared) -> Workload:
    """What the flow says the job will do (model, task app, rollouts or tokens), from its plan."""
    assert item.plan is not None
    try:
        return get_flow(item.plan.flow).workload(item.plan)
    except (SynthNbError, OSError, ValueError):  # a dataset that cannot be read is said by the checks, not here
        return Workload()


def _top_level_terms(formula: str) -> list[str]:
    """``a (b + c) + d`` as ``["a (b + c)", "d"]``: a sum's terms, never cut inside parentheses."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(formula):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and formula.startswith(" + ", i):
            terms.append(formula[start:i])
            start = i + 3
    terms.append(formula[start:])
    return [term for term in terms if term.strip()]


def _amount(work: Workload, room: int) -> str:
    """``~1,256 rollouts, 16 at a time: rollout.budget 1000 (reflective minibatches of 12) + …``: the count, then
    as many whole terms of how it was counted as ``room`` characters hold (``--verbose`` shows the payload they
    come from)."""
    if work.rollouts is not None:
        text = f"~{work.rollouts:,} rollouts" + (f", {work.concurrency} at a time" if work.concurrency else "")
    elif work.tokens is not None:
        text = f"~{work.tokens:,} tokens"
    else:
        return ""
    parts = _top_level_terms(work.formula.split(";")[0])
    shown: list[str] = []
    for part in parts:
        candidate = f"{text}: {' + '.join([*shown, part])}" + (" + …" if len(shown) + 1 < len(parts) else "")
        if len(candidate) > room:
            if shown:
                break
            part = re.sub(r" \(.*\)$", " (…)", part)  # the first term alone is too long: its words in brackets go
        shown.append(part)
    if not shown:
        return text
    more = " + …" if len(shown) < len(parts) else ""
    return f"{text}: {' + '.join(shown)}{more}"


def _upload_text(row: Mapping[str, Any]) -> str:
    """``data/train.jsonl (17.5 KiB)`` (``, first 100 lines`` with ``--examples``), kept on one row."""
    limit = f", first {row['limit']} lines" if "limit" in row else ""
    return f"{row['file']}{_KEEP}({row['size'].replace(' ', _KEEP)}{limit})"


def compact_rows(item: Prepared, width: int = 80) -> list[tuple[str, str]]:
    """One config's summary as ``(label, text)`` rows (``width``: the screen's, which the rollouts row fits)."""
    rows: list[tuple[str, str]] = []
    plan = item.plan
    if plan is not None:
        work = _workload(item)
        if work.model:
            rows.append(("model", work.model))
        if work.task_url:
            rows.append(("task app", work.task_url))
        uploads = [r for r in step_rows(plan, Path.cwd()) if "file" in r]
        if uploads:
            rows.append(("data", " · ".join(map(_upload_text, uploads))))
        amount = _amount(work, 2 * (width - _LABEL) - 12)  # two rows at most, whatever the words wrapping
        if amount:
            rows.append(("runs", amount))
        seeds = dict.fromkeys(_seed_lists(plan.preview()))  # the same list under two keys is said once
        if seeds:
            rows.append(("seeds", " · ".join(f"{key}{_KEEP}{_folded(values)}".replace(" (", f"{_KEEP}(")
                                             for key, values in seeds)))
    if item.secrets is not None:
        rows.append(("keys", _keys_text(item)))
    rows += [("warning", warning) for warning in warnings_of(item)]
    if item.error is not None:
        rows.append(("error", str(item.error)))
    return rows


def compact_text(prepared: Sequence[Prepared], *, backend_url: str, width: int = 80) -> str:
    """The one-screen summary of what a submission sends, closed by ``N jobs → URL`` (``width``: the terminal's
    columns; each row wraps under its label)."""
    lines: list[str] = []
    for item in prepared:
        config = item.config
        kind = ("not loaded" if config is None
                else config.flow + (f"/{config.algorithm}" if config.algorithm else ""))
        lines.append(f"== {item.path.name}  ({kind})")
        for label, text in compact_rows(item, width):
            wrapped = textwrap.wrap(text, width=max(width, _LABEL + 20), break_long_words=False, break_on_hyphens=False,
                                    initial_indent=f"   {label + ':':<{_LABEL - 3}}", subsequent_indent=" " * _LABEL)
            lines += [line.replace(_KEEP, " ") for line in wrapped]
    count = sum(1 for item in prepared if item.plan is not None)
    lines.append(f"{count} job{'s' if count != 1 else ''} → {backend_url}   (--verbose: every payload in full)")
    # the rows quote the plan as the flow reads it, not its masked preview: a task URL's credentials, a key
    # written into the config are masked here
    secrets = tuple(secret for item in prepared if item.plan is not None for secret in item.plan.secrets)
    return mask_text("\n".join(lines), secrets)
