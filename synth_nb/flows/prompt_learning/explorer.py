"""``Explorer``: why a prompt-learning run won, and how it shows itself in a notebook, an export, a terminal.

The data (candidates, lineage, Pareto front, per-seed wins, prompt diffs) is ``explorer_model.Exploration``,
built from a job's events by ``explorer_events.explore``; this class adds the outputs: one static HTML
output (a saved notebook keeps it), Markdown and a one-line text.
"""

from __future__ import annotations

from typing import Any

from synth_nb.flows.prompt_learning.explorer_html import explorer_html
from synth_nb.flows.prompt_learning.explorer_markdown import explorer_markdown
from synth_nb.flows.prompt_learning.explorer_model import (
    Axis,
    Candidate,
    Exploration,
    LineageNode,
    MiproSearch,
    MiproTrial,
    Proposal,
    SeedWins,
)

__all__ = ["Axis", "Candidate", "Exploration", "Explorer", "LineageNode", "MiproSearch", "MiproTrial", "Proposal",
           "SeedWins"]


class Explorer(Exploration):
    """An ``Exploration`` that renders itself: ``to_html()``, ``to_markdown()``, ``frame()`` (a DataFrame)."""

    def to_html(self) -> str:
        return explorer_html(self)

    def to_markdown(self) -> str:
        return explorer_markdown(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """HTML (it holds its own table alternative) and one line of text; ``to_markdown()`` for exports
        (a Markdown copy in every saved output would double its size)."""
        return {"text/html": self.to_html(), "text/plain": self.summary_line()}

    def __repr__(self) -> str:
        return f"Explorer({self.summary_line()})"
