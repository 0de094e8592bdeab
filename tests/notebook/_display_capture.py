"""Records what ``IPython.display.display`` / ``update_display`` would send: the outputs of a cell in
display order (a display-id output with every bundle it showed, or a widget) and the updates by id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


class Output:
    """One display-id output: the bundle it was created with, then each update."""

    def __init__(self, display_id: str, first: dict[str, Any]) -> None:
        self.display_id = display_id
        self.shown = [first]

    @property
    def last(self) -> dict[str, Any]:
        return self.shown[-1]


class DisplayCapture:
    def __init__(self) -> None:
        self.items: list[Any] = []
        self.by_id: dict[str, Output] = {}

    def display(self, obj: Any, raw: bool = False, display_id: Any = None, **_: Any) -> Output | None:
        if not isinstance(display_id, str):
            assert display_id in (None, False), "outputs are created with a display id of their own"
            self.items.append(obj)
            return None
        assert raw and display_id not in self.by_id
        output = Output(display_id, obj)
        self.items.append(output)
        self.by_id[display_id] = output
        return output

    def update_display(self, obj: Any, *, display_id: str, raw: bool = False, **_: Any) -> None:
        assert raw
        self.by_id[display_id].shown.append(obj)  # an update names an output that exists

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Any:
        return self.items[index]


def capture_display(monkeypatch: pytest.MonkeyPatch) -> DisplayCapture:
    import IPython.display

    shown = DisplayCapture()
    monkeypatch.setattr(IPython.display, "display", shown.display)
    monkeypatch.setattr(IPython.display, "update_display", shown.update_display)
    return shown
