"""What a ``%synth_train`` cell leaves as its value once it has shown it: IPython shows it only once.

A magic that opened a job's panel, printed a dry run's preview, displayed pre-flight cards or a wizard still
returns what it made (``job = %synth_train … --yes``, ``cards[0].ok``, ``fk = %synth_train --fork ID``; a
wizard is displayed by the magic itself, so the assigned form shows it too), but IPython would then show it again
under the cell as ``Out[N]``: a ``Job(… status='running')`` that stays "running" under a panel that says
"succeeded", sixty lines of cards in text, ``[Plan(… PosixPath('/abs/…'))]``. So the value of the cell that
showed it displays as nothing (IPython's convention for a trailing value already shown), and in any later
cell as what it is now: a job's current one-line repr, the cards or plans again.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["ShownList", "install", "is_shown", "shown"]

T = TypeVar("T")

#: ``id()`` of the values the cell running now has shown already (emptied after every cell)
_SHOWN: set[int] = set()


class ShownList(list):
    """A magic's list of results (jobs, cards, plans): nothing more under the cell that showed them."""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        if id(self) in _SHOWN:
            return
        for item in self:
            display(item)


def shown(value: T) -> T:
    """Mark ``value`` as shown by the cell running now (a list becomes a ``ShownList``); None stays None."""
    if value is None:
        return value
    if isinstance(value, list) and not isinstance(value, ShownList):
        value = ShownList(value)  # type: ignore[assignment]
    _SHOWN.add(id(value))
    return value


def is_shown(value: object) -> bool:
    """True when the cell running now has shown ``value`` already (a widget the magic displayed itself)."""
    return id(value) in _SHOWN


def _show_job(job: Any) -> None:
    """A ``Job`` as a cell's value: nothing under the panel that shows it, else its current one-line repr."""
    from IPython.display import display

    if id(job) not in _SHOWN:
        display({"text/plain": repr(job)}, raw=True)


def _cell_ended(*_: Any) -> None:
    _SHOWN.clear()


def install(shell: Any) -> None:
    """Register with ``shell``: how a ``Job`` value is shown, and forgetting the shown values after each cell."""
    from synth_nb.job import Job

    formatter = getattr(getattr(shell, "display_formatter", None), "ipython_display_formatter", None)
    if formatter is not None:
        formatter.for_type(Job, _show_job)
    events = getattr(shell, "events", None)
    if events is not None and _cell_ended not in events.callbacks.get("post_run_cell", []):
        events.register("post_run_cell", _cell_ended)
