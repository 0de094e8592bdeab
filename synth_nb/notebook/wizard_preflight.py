"""The pre-flight card on the wizard's Preview step: ``--check``'s card for what the Preview shows.

The checks make network calls (task app, one dry rollout through the backend) and may take a while, so
they run in a thread off the kernel loop; they never create a job. What reaches the front end is the
card's static HTML with every secret the configs resolve masked, keyed by the payloads it was built
for: a card of a payload the user has since changed is stale and is dropped.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synth_nb.pipeline import Prepared, actions
from synth_nb.secrets import mask_text
from synth_nb.secrets.redact import redact

__all__ = ["PreflightStep", "preflight_rows", "still_current"]


def preflight_rows(batch: actions.Batch, rel: Callable[[Any], str], folder: Path | None = None
                   ) -> list[dict[str, Any]]:
    """One row per config the wizard's form prepared: ``{path, ok, title, html, preview}``, masked; ``preview``
    is the payload checked. With ``folder`` (the notebook's), each estimate is kept for the job sent with it."""
    from synth_nb.pipeline.card import card_html

    prepared = batch.prepared
    checked = actions.check_batch(batch, folder)
    cards, hidden = checked.cards, checked.hidden
    hidden += [html.escape(value) for value in hidden if html.escape(value) != value]
    return [{"path": rel(item.path), "ok": card.ok, "title": card.title,
             "html": mask_text(card_html(card), tuple(hidden)),
             "preview": redact(item.plan.preview_json()) if item.plan is not None else ""}
            for item, card in zip(prepared, cards, strict=True)]


def still_current(rows: Sequence[dict[str, Any]], previews: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose payload is still the one on the Preview step."""
    now = {p["path"]: p["preview"] for p in previews}
    return [row for row in rows if now.get(row["path"]) == row["preview"]]


class PreflightStep:
    """The wizard's "Run pre-flight check" button: ``--check``'s card for each payload the Preview shows."""

    _prepared: list[Prepared]
    #: what the form prepared (``actions.prepare``), checked as it is
    _batch: actions.Batch | None
    _preflight_rows: list[dict[str, Any]]
    _loop: Any
    #: the notebook's folder, where the estimates checked are kept for the jobs sent
    _folder: Path
    preflight: list[dict[str, Any]]
    preflight_running: bool
    preflight_error: str
    preflight_task: asyncio.Future[Any] | None
    previews: list[dict[str, Any]]

    #: the wizard's own: bring the Preview up to date, name a file relative to the notebook, shorten a message
    _recompute: Callable[[], None]
    _rel: Callable[[Any], str]
    _short: Callable[[str], str]

    def _start_preflight(self) -> None:
        """Check what the Preview shows, off the kernel loop; it sends no job."""
        self._recompute()
        if self.preflight_running or not self._prepared or self._batch is None:
            return
        self.preflight_running, self.preflight_error = True, ""
        self.preflight_task = self._loop.loop.create_task(self._preflight(self._batch))

    async def _preflight(self, batch: actions.Batch) -> None:
        try:  # task app, dry rollout: network calls, off the kernel loop
            self._preflight_rows = await asyncio.to_thread(preflight_rows, batch, self._rel, self._folder)
        except Exception as exc:  # keep the wizard alive; library messages are masked already
            self.preflight_error = self._short(f"The pre-flight check failed: {type(exc).__name__}: {exc}")
        finally:  # the card first: the front end announces the outcome when the running flag clears
            self._show_preflight()
            self.preflight_running = False

    def _show_preflight(self) -> None:
        self.preflight = [{k: v for k, v in row.items() if k != "preview"}
                          for row in still_current(self._preflight_rows, self.previews)]
