"""The estimates ``--check`` made, kept by plan, so a job later sent with that very plan carries the better one.

A submission makes its estimate from the plan alone (``plan_estimate``: nothing is sent, no dry run): the
rollouts, and the tokens only where the plan's files give them. ``--check`` (the terminal, the magic, the
wizard's Run pre-flight check) also runs one dry rollout (and a prompt search's dry proposal), which size the
tokens and estimate the wall time. Each card's estimate is kept here under its plan's fingerprint
(the masked ``--dry-run --json`` document); a job sent with the same plan from the same folder is then sent
with it, its basis saying so ("--check at 14:02: the config, one dry rollout and one dry proposal"). Any
change to the plan (a flag, the config, the backend, a task URL) makes another fingerprint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.job.registry import REGISTRY_DIR
from synth_nb.pipeline.estimate import figures, plan_estimate

if TYPE_CHECKING:
    from synth_nb.pipeline.card import PreflightCard
    from synth_nb.pipeline.prepare import Prepared
    from synth_nb.pipeline.target import Target
    from synth_nb.plan import Plan

__all__ = ["KEEP", "checked_estimate", "estimate_for", "fingerprint", "keep_checked"]

STORE = "estimates.json"
#: the newest fingerprints kept (older ones are dropped)
KEEP = 50


def fingerprint(plan: Plan) -> str:
    """sha256 of the plan's masked ``--dry-run --json`` document (it holds no idempotency key)."""
    text = json.dumps(plan.preview(), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _path(folder: Path) -> Path:
    return folder / REGISTRY_DIR / STORE


def _load(folder: Path) -> dict[str, Any]:
    try:
        kept = json.loads(_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def keep_checked(folder: Path, prepared: Sequence[Prepared], cards: Sequence[PreflightCard], target: Target) -> None:
    """Keep each card's estimate under its plan's fingerprint (a folder that cannot be written keeps none)."""
    kept = _load(folder)
    stamp = time.strftime("%H:%M")
    for item, card in zip(prepared, cards, strict=False):
        if item.plan is None or card.estimate is None:
            continue
        kept.pop(fingerprint(item.plan), None)
        kept[fingerprint(item.plan)] = figures(card.estimate, target, f"--check at {stamp} ({card.estimate.basis})")
    newest = dict(list(kept.items())[-KEEP:])
    with contextlib.suppress(OSError):
        path = _path(folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".estimates-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(newest, out, indent=1)
        os.replace(temporary, path)


def checked_estimate(folder: Path, plan: Plan) -> dict[str, Any] | None:
    """The estimate ``--check`` made of this very plan from ``folder``, if it made one."""
    found = _load(folder).get(fingerprint(plan))
    return found if isinstance(found, dict) else None


def estimate_for(folder: Path, plan: Plan, target: Target) -> dict[str, Any]:
    """The estimate a job is sent with: the one ``--check`` made of this very plan here, else the plan's own
    (nothing is sent for it, no dry run: measured in ``benchmarks/submission_estimate.py``)."""
    return checked_estimate(folder, plan) or plan_estimate(plan, target)
