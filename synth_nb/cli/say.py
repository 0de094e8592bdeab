"""Where the terminal says what an action notes on the way (kept apart from ``synth_nb.cli.follow``, which
imports the whole follow stage, so ``synth-nb cancel`` does not pay for it)."""

from __future__ import annotations

import sys

__all__ = ["note"]


def note(text: str) -> None:
    """What an action says on the way (the embedded backend found, task-app checks): stderr, beside the preview."""
    print(text, file=sys.stderr, flush=True)
