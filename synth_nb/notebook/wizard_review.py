"""What the wizard's Secrets, Preview and Submit steps show of prepared configs.

Rows of plain, masked data for the front end: one row per required key (in plain words), one preview
per config (requests with upload file sizes, folded payload lines, warnings, the diff against the last
submission from this notebook folder). Kept apart from the widget so the rules read and test alone.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.pipeline import Prepared
from synth_nb.pipeline.preview import secrets_rows, warnings_of
from synth_nb.pipeline.preview_layout import payload_lines, step_rows
from synth_nb.secrets.redact import redact

__all__ = ["LAST_SUBMISSION", "Baseline", "load_last", "merge_secret_rows", "preview_row", "save_last"]

LAST_SUBMISSION = Path(".synth_nb") / "last_submission.json"


@dataclass(frozen=True)
class Baseline:
    """What a payload on the Preview step is diffed against: the last submission, or a forked job's plan."""

    #: how the step names it ("Changes since <label>")
    label: str
    #: masked payload text by config path (relative to the notebook folder)
    texts: Mapping[str, str]
    #: a fork's diff is what the user came to see, so it opens unfolded
    unfolded: bool = False

    @classmethod
    def last_submission(cls, folder: Path) -> Baseline:
        return cls("the last submission from this notebook", load_last(folder))


def merge_secret_rows(prepared: Sequence[Prepared], folder: Path) -> list[dict[str, Any]]:
    """One row per key any selected config needs; a key found for one config counts as found. A missing key
    a ``.env`` file sets under a misspelt name says so (``near``: "found NAME: did you mean KEY (in …)?")."""
    rows: dict[str, dict[str, Any]] = {}
    for item in prepared:
        near = item.secrets.near if item.secrets is not None else {}
        for row in secrets_rows(item.secrets, item.required, folder):
            if row["name"] not in rows or not rows[row["name"]]["found"]:
                rows[row["name"]] = {**row, "near": "" if row["found"] else near.get(row["name"], "")}
    return list(rows.values())


def preview_row(item: Prepared, rel: str, folder: Path, short: Callable[[str], str],
                baseline: Baseline | None = None) -> dict[str, Any]:
    """The Preview step's data for one config; ``short`` shortens paths in messages.

    ``baseline``: what the payload is diffed against (default: the last submission from ``folder``).
    """
    plan = item.plan
    # the plan's preview masks secrets by key name and known value; a synced trait also masks what is shaped
    # like a key or holds URL credentials (an override such as `model` or `task_url` may)
    text = redact(plan.preview_json()) if plan is not None else ""
    baseline = baseline or Baseline.last_submission(folder)
    last = baseline.texts.get(rel)
    last = redact(last) if last is not None else None
    diff: list[str] = []
    if text and last is not None:
        diff = list(difflib.unified_diff(last.splitlines(), text.splitlines(), baseline.label, "now",
                                         lineterm="", n=1))
    return {
        "path": rel,
        "flow": item.config.flow if item.config is not None else None,
        "algorithm": item.config.algorithm if item.config is not None else None,
        "error": short(str(item.error)) if item.error else "",
        "warnings": [short(w) for w in warnings_of(item)],
        "steps": step_rows(plan, folder) if plan is not None else [],
        "preview": text,
        "lines": [{k: redact(v) for k, v in line.items()} for line in payload_lines(plan.preview())]
        if plan is not None else [],
        "diff": diff,
        "has_last": last is not None,
        "diff_label": baseline.label,
        "diff_open": baseline.unfolded,
    }


def load_last(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / LAST_SUBMISSION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_last(folder: Path, previews: dict[str, str]) -> None:
    """Remember the masked previews of this submission for the next diff (never raw values)."""
    path = folder / LAST_SUBMISSION
    path.parent.mkdir(parents=True, exist_ok=True)
    data = load_last(folder)
    data.update(previews)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
