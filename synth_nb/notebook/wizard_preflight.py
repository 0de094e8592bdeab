"""The pre-flight card on the wizard's Preview step: ``--check``'s card for what the Preview shows.

The checks make network calls (task app, one dry rollout through the backend) and may take a while, so
they run in a thread off the kernel loop; they never create a job. What reaches the front end is the
card's static HTML with every secret the configs resolve masked, keyed by the payloads it was built
for: a card of a payload the user has since changed is stale and is dropped.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from synth_nb.pipeline import actions
from synth_nb.secrets import mask_text

__all__ = ["preflight_rows", "still_current"]


def preflight_rows(batch: actions.Batch, rel: Callable[[Any], str]) -> list[dict[str, Any]]:
    """One row per config the wizard's form prepared: ``{path, ok, title, html, preview}``, masked; ``preview``
    is the payload checked."""
    from synth_nb.pipeline.card import card_html

    prepared = batch.prepared
    checked = actions.check_batch(batch)
    cards, hidden = checked.cards, checked.hidden
    hidden += [html.escape(value) for value in hidden if html.escape(value) != value]
    return [{"path": rel(item.path), "ok": card.ok, "title": card.title,
             "html": mask_text(card_html(card), tuple(hidden)),
             "preview": item.plan.preview_json() if item.plan is not None else ""}
            for item, card in zip(prepared, cards, strict=True)]


def still_current(rows: Sequence[dict[str, Any]], previews: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose payload is still the one on the Preview step."""
    now = {p["path"]: p["preview"] for p in previews}
    return [row for row in rows if now.get(row["path"]) == row["preview"]]
