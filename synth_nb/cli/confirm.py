"""What ``synth-nb train`` shows before it submits, and the question a terminal answers.

The preview is the one-screen summary (``synth_nb.pipeline.preview.compact_text``: flow, model, task app, files
with their sizes, rollouts, folded seed lists, masked keys) closed by "N jobs → URL"; ``--verbose`` shows every
payload in full instead. It goes to stderr, so whatever reads stdout (job ids with ``--no-poll``) is unaffected.
On a terminal (stdin and stdout) the user confirms at ``Submit? [Y/n]``: Enter or ``y`` submits, ``n`` sends
nothing (exit 1), Esc sends nothing and exits 130 as Esc at a picker does, Ctrl-C is an interrupt (130), and any
other answer asks again. ``--yes`` skips the question. Elsewhere (CI, pipes) the submission goes on, as
synth-ai 0.2.24's does.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, TextIO

from synth_nb.backend import display_url
from synth_nb.cli.pickers import is_interactive
from synth_nb.pipeline.actions import Batch
from synth_nb.pipeline.preview import compact_text, preview_text

__all__ = ["declined", "preview"]

YES = ("", "y", "yes")
NO = ("n", "no")
#: what the prompt returns when Esc was pressed (no typed answer holds it)
_ESC = "\x1b"
#: Esc at ``Submit?`` is Esc at a picker: nothing sent, exit 130
EXIT_ESC = 130
EXIT_NO = 1


def preview(batch: Batch, *, verbose: bool = False, width: int | None = None) -> str:
    """What ``batch`` sends, and where: the one-screen summary, or every payload in full (``verbose``)."""
    url = display_url(batch.target.url)
    if not verbose:
        return compact_text(batch.prepared, backend_url=url, width=width or shutil.get_terminal_size().columns)
    count = len(batch.plans)
    return f"{preview_text(batch.prepared, backend_url=url)}\n\n{count} job{'s' if count != 1 else ''} → {url}"


def _ask() -> str | None:
    """One answer to ``Submit? [Y/n]``: the typed text, ``_ESC`` for Esc, None at the end of input (Ctrl-D)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    keys = KeyBindings()

    @keys.add(Keys.Escape, eager=True)
    def _escape(event: Any) -> None:
        event.app.exit(result=_ESC)

    try:
        return str(PromptSession(key_bindings=keys).prompt("Submit? [Y/n] "))
    except EOFError:
        return None


def declined(batch: Batch, *, ask: bool, verbose: bool = False, err: TextIO | None = None) -> int | None:
    """Show the preview; on a terminal (and ``ask``) ask ``Submit? [Y/n]`` until it is answered.

    None: submit. Otherwise nothing was sent (said on stderr) and the command ends with the code returned.
    """
    err = err or sys.stderr
    print(preview(batch, verbose=verbose), file=err, flush=True)
    if not ask or not is_interactive():
        return None
    while True:
        answer = _ask()
        if answer == _ESC:
            print("Esc: nothing was sent", file=err, flush=True)
            return EXIT_ESC
        if answer is None:  # end of input: nobody said yes
            print("no answer: nothing was sent", file=err, flush=True)
            return EXIT_NO
        if answer.strip().lower() in YES:
            return None
        if answer.strip().lower() in NO:
            print("nothing was sent", file=err, flush=True)
            return EXIT_NO
        print("answer y (or Enter) to submit, n or Esc to send nothing", file=err, flush=True)
