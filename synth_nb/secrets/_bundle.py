"""Resolved secrets: values held as ``SecretStr``, every display path masked, sources recorded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from pydantic import SecretStr

from synth_nb.secrets._keys import SETTING_KEYS, missing_keys_error
from synth_nb.secrets._mask import mask, secret_parts

__all__ = ["ResolvedSecret", "ResolvedSetting", "SecretBundle", "missing_keys_error"]

@dataclass(frozen=True)
class ResolvedSecret:
    """One secret and where it came from (``source`` is e.g. ``"environment"``, ``".env:/p/.env"``)."""

    name: str
    value: SecretStr
    source: str

    @property
    def masked(self) -> str:
        return mask(self.value)

    def __repr__(self) -> str:  # the dataclass repr would be safe too; this one is shorter
        return f"ResolvedSecret(name={self.name!r}, value={self.masked!r}, source={self.source!r})"

    __str__ = __repr__


@dataclass(frozen=True)
class ResolvedSetting:
    """A non-secret variable (``TASK_APP_URL``, ``SDK_EXPERIMENTAL``...) and its source."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class SecretBundle:
    """Everything ``resolve_secrets`` found, whatever the flow; ``require(keys)`` checks what a job needs."""

    secrets: dict[str, ResolvedSecret] = field(default_factory=dict)
    settings: dict[str, ResolvedSetting] = field(default_factory=dict)
    #: human-readable notes (which .env files were read, ignored sources...)
    notes: tuple[str, ...] = ()
    #: every source read, highest precedence first (files by path, "the environment", Modal secrets)
    looked_in: tuple[str, ...] = ()
    #: keys a .env file sets to nothing, and where (``"/p/.env:3"``)
    blank: Mapping[str, str] = field(default_factory=dict)
    #: keys a .env file sets under a misspelt name: ``"found NAME: did you mean KEY (in FILE line N)?"``
    near: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> ResolvedSecret | None:
        return self.secrets.get(name)

    def secret_value(self, name: str) -> str | None:
        """The raw value, for the HTTP layer only. Never print it."""
        found = self.secrets.get(name)
        return found.value.get_secret_value() if found else None

    def setting(self, name: str) -> str | None:
        found = self.settings.get(name)
        return found.value if found else None

    def values(self) -> list[SecretStr]:
        """Every secret value (aliases split), for masking previews and logs."""
        return [SecretStr(part) for item in self.secrets.values()
                for part in secret_parts(item.value.get_secret_value())]

    def missing(self, keys: Iterable[str]) -> list[str]:
        """The ``keys`` that were not found, in the order given."""
        return [k for k in keys if k not in self.secrets]

    def require(self, keys: Iterable[str]) -> SecretBundle:
        """Raise ``SecretsError`` naming every missing key of ``keys`` and how to provide it; return self."""
        missing = self.missing(keys)
        if missing:
            raise missing_keys_error(missing, looked_in=self.looked_in, blank=self.blank, near=self.near)
        return self

    def as_masked_dict(self) -> dict[str, dict[str, str]]:
        """``{name: {"masked": "••••1a2b", "source": "environment"}}`` for every secret found."""
        return {name: {"masked": s.masked, "source": s.source} for name, s in self.secrets.items()}

    def with_value(self, name: str, value: str, source: str = "pasted") -> SecretBundle:
        """A copy with ``name`` set (e.g. a key pasted into the wizard)."""
        if name in SETTING_KEYS:
            settings = {**self.settings, name: ResolvedSetting(name, value, source)}
            return replace(self, settings=settings)
        secrets = {**self.secrets, name: ResolvedSecret(name, SecretStr(value), source)}
        return replace(self, secrets=secrets)

    def __iter__(self) -> Iterator[ResolvedSecret]:
        return iter(self.secrets.values())

    def __repr__(self) -> str:
        found = ", ".join(f"{n}={s.masked}" for n, s in self.secrets.items())
        return f"SecretBundle({found})"

    __str__ = __repr__
