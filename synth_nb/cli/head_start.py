"""Start the embedded backend while ``synth-nb train --backend local`` is still starting itself.

The command's own start-up (importing the pipeline, reading the configs) and the backend process's (importing
the server, opening its database, loading the offline policy) take about half a second each on a quiet
machine and used to run one after the other: the first thing the submission does is find or start the
backend. Here the start begins before the command imports anything heavy, on a thread, and the submission's
``ensure_backend`` takes its result (``synth_nb.local.shared.start_in_background``).

Only when the words say the backend will be asked for (``--backend local``; not ``--help``, nor a selector that
uses no backend of its own: ``--jobs``, ``--attach``, ``--compare``). When the command ends without having
asked for it (bad flags, a usage error found before the submission), what was started is stopped
(``abandon``): bad input leaves nothing running that it did not leave before. Anything this module cannot
tell from the words alone is left to the submission, which starts the backend as before.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["abandon", "head_start"]

#: flags after which the command asks for no embedded backend (argparse also takes their prefixes)
_NO_BACKEND = ("--help", "--jobs", "--attach", "--compare")


def _asks_for_local(words: Sequence[str]) -> bool:
    local = any(w == "--backend=local" or (w == "--backend" and nxt == "local")
                for w, nxt in zip(words, [*words[1:], ""], strict=True))
    if not local or "-h" in words:
        return False
    return not any(len(w) > 2 and w.startswith("--") and flag.startswith(w.split("=", 1)[0])
                   for w in words for flag in _NO_BACKEND)


def head_start(words: Sequence[str]) -> Path | None:
    """Begin starting the data folder's backend when ``words`` (the command's arguments) will ask for it;
    the folder, or None when nothing was begun."""
    if not _asks_for_local(words):
        return None
    if any(importlib.util.find_spec(name) is None for name in ("starlette", "uvicorn")):
        return None  # the submission says which extra is missing
    from synth_nb.local.shared import default_data_dir, start_in_background

    folder = default_data_dir()
    start_in_background(folder)
    return folder


def abandon(folder: Path) -> None:
    """The command ended: a backend this process started early and nothing asked for is stopped (a start the
    submission took is left running, as it always is)."""
    from synth_nb.local.shared import abandon_background_start

    abandon_background_start(folder)
