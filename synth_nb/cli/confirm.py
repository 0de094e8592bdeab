"""What ``synth-nb train`` shows before it submits, and the question a terminal answers.

The preview is the compact one the notebook shows too (``synth_nb.pipeline.preview``: masked keys, folded seed
lists, upload files with their sizes) closed by "N jobs → URL". It goes to stderr, so whatever reads stdout
(job ids with ``--no-poll``) is unaffected. On a terminal (stdin and stdout) the user confirms, Enter meaning
yes; ``--yes`` skips the question. Elsewhere (CI, pipes) the submission goes on, as synth-ai 0.2.24's does.
"""

from __future__ import annotations

import sys
from typing import TextIO

from synth_nb.backend import display_url
from synth_nb.cli.pickers import is_interactive
from synth_nb.pipeline.actions import Batch
from synth_nb.pipeline.preview import preview_text

__all__ = ["confirmed", "preview"]

YES = ("", "y", "yes")


def preview(batch: Batch) -> str:
    """The masked preview of what ``batch`` sends, and where."""
    url = display_url(batch.target.url)
    count = len(batch.plans)
    return f"{preview_text(batch.prepared, backend_url=url)}\n\n{count} job{'s' if count != 1 else ''} → {url}"


def confirmed(batch: Batch, *, ask: bool, stdin: TextIO | None = None, err: TextIO | None = None) -> bool:
    """Show the preview; on a terminal (and ``ask``) return the answer to "Submit?", else True."""
    stdin, err = stdin or sys.stdin, err or sys.stderr
    print(preview(batch), file=err, flush=True)
    if not ask or not is_interactive(stdin=stdin):
        return True
    print("Submit? [Y/n] ", end="", file=err, flush=True)
    answer = stdin.readline()
    if not answer:  # end of input: nobody said yes
        print(file=err)
        return False
    return answer.strip().lower() in YES
