"""Form values that hold a credential stay in the kernel; the wizard's synced traits show them masked.

A backend URL with ``user:password@`` in it, an override (``task_url``, ``model``…) holding a key-shaped token:
a synced trait is in the widget's state, which the front end keeps, every saved notebook with widget state
stores, and a static copy of the view writes out. So the trait holds the masked text
(``synth_nb.secrets.redact``: userinfo and key-shaped tokens, at most their last 4 characters) and the value
itself is kept here. The front end masks a committed value the same way, sends the value in a message of its
own (``keep``) and then the masked trait; it sends back what its field shows: the masked text unchanged means
the value kept; an edit around the masked part (another port, another path) keeps the credential under it. A
trait set to a value holding a credential (by the kernel, or a front end that does not mask) is masked here,
the value kept, and the masked form sent back.
"""

from __future__ import annotations

import difflib
from typing import Any

import traitlets

from synth_nb.secrets._mask import MASK_CHAR
from synth_nb.secrets.redact import redact

__all__ = ["KeptFields", "KeptValues"]


def _masked_parts(raw: str, masked: str) -> list[tuple[str, str]]:
    """``(shown, value)`` for each part of ``raw`` that ``masked`` replaces, in order."""
    matcher = difflib.SequenceMatcher(None, raw, masked, autojunk=False)
    return [(masked[j1:j2], raw[i1:i2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op == "replace"]


class KeptValues:
    """Per field name, the value behind a masked one (only fields whose value holds a credential)."""

    def __init__(self) -> None:
        self._raw: dict[str, str] = {}

    def hold(self, name: str, value: Any) -> Any:
        """What field ``name``'s synced trait holds for ``value`` (sent by the front end or set by the kernel):
        the masked text when the value holds a credential (the value is kept), else the value itself."""
        if not isinstance(value, str):
            self._raw.pop(name, None)
            return value
        raw = self._restored(name, value)
        masked = redact(raw)
        if masked == raw:
            self._raw.pop(name, None)
        else:
            self._raw[name] = raw
        return masked

    def keep(self, name: str, value: str) -> None:
        """A value the front end sends apart (it holds a credential) before its field's masked trait."""
        raw = self._restored(name, value)
        if redact(raw) != raw:
            self._raw[name] = raw

    def value(self, name: str, shown: Any) -> Any:
        """The real value of field ``name``, whose trait shows ``shown``."""
        raw = self._raw.get(name)
        return raw if raw is not None and isinstance(shown, str) and redact(raw) == shown else shown

    def _restored(self, name: str, incoming: str) -> str:
        """``incoming`` with the masked parts of the value kept for ``name`` put back (an edit around them)."""
        raw = self._raw.get(name)
        if raw is None or MASK_CHAR not in incoming:
            return incoming
        for shown, value in _masked_parts(raw, redact(raw)):
            if shown in incoming:
                incoming = incoming.replace(shown, value, 1)
        return incoming


class KeptFields:
    """The wizard's ``backend`` and ``overrides`` traits through ``_kept`` (a ``KeptValues``): what is set is
    masked, and ``_backend_value()`` / ``_override_values()`` give the values themselves."""

    _kept: KeptValues
    backend: str
    overrides: dict[str, Any]

    @traitlets.validate("backend")
    def _masked_backend(self, proposal: Any) -> Any:
        return self._kept.hold("backend", proposal["value"])

    @traitlets.validate("overrides")
    def _masked_overrides(self, proposal: Any) -> Any:
        return {name: self._kept.hold(f"override:{name}", value) for name, value in proposal["value"].items()}

    def _backend_value(self) -> str:
        """The backend field's value (the trait may show it masked)."""
        return str(self._kept.value("backend", self.backend))

    def _override_values(self) -> dict[str, Any]:
        """The override fields' values (the trait may show some masked)."""
        return {name: self._kept.value(f"override:{name}", value) for name, value in self.overrides.items()}
