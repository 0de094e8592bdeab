"""What the wizard's form is made of: config rows, ``.env`` choices, override fields, prefills, parsing.

The override fields are rows of the one override table (``synth_nb.flows.override_rows``): only those the
selected configs' flows honour are offered. Kept free of widgets so the form's rules are testable with
plain dicts and files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from synth_nb.flows.override_rows import CORE_ROWS, OverrideRow
from synth_nb.flows.overrides import config_value

__all__ = ["OVERRIDE_SPECS", "discover", "env_files_in", "override_specs", "parse_overrides", "prefill_overrides",
           "task_url_field"]

#: the fields of the overrides every flow is asked about: name, label, input type ("text" | "int" | "bool" |
#: "url"), hint
OVERRIDE_SPECS: tuple[dict[str, str], ...] = tuple(row.field() for row in CORE_ROWS)


def _rows() -> dict[str, OverrideRow]:
    from synth_nb.flows import override_rows

    return {row.name: row for row in override_rows()}


def override_specs(flows: Iterable[str] | None = None) -> list[dict[str, str]]:
    """The wizard's override fields: those one of ``flows`` honours (None: every row of the table)."""
    from synth_nb.flows import get_flow

    rows = list(_rows().values())
    if flows is None:
        return [row.field() for row in rows]
    chosen = [get_flow(name) for name in dict.fromkeys(flows)]
    return [row.field() for row in rows if any(flow.honours(row.name) for flow in chosen)]


def discover(folder: Path) -> list[dict[str, Any]]:
    """Config rows for the picker: ``{path (relative), flow, algorithm, valid, error, warnings}``.

    The rows are ``synth_nb.pipeline.discover``'s: training configs, and TOML files that do not parse
    (marked invalid, since they may be broken training configs).
    """
    from synth_nb.pipeline import discover as discover_configs

    rows = []
    for found in discover_configs(folder):
        path = Path(found.path)
        try:
            rel = str(path.resolve().relative_to(folder.resolve()))
        except ValueError:
            rel = str(path)
        rows.append({"path": rel, "flow": found.flow or "", "algorithm": found.algorithm or "",
                     "valid": bool(found.valid), "error": _first_line(found.error),
                     "warnings": list(found.warnings)})
    return sorted(rows, key=lambda r: r["path"])


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def env_files_in(folder: Path) -> list[str]:
    """``.env``-style files next to the notebook (``.env``, ``.env.*``, ``*.env``), relative names."""
    names = {p.name for p in folder.iterdir() if p.is_file() and (
        p.name == ".env" or p.name.startswith(".env.") or p.name.endswith(".env"))}
    return sorted(names)


def prefill_overrides(config_path: Path) -> dict[str, Any]:
    """Values from the config shown in the override fields before the user changes anything.

    Which config keys an override replaces is the flow's to say (``Flow.override_keys``).
    """
    from synth_nb.config import load_config
    from synth_nb.errors import SynthNbError
    from synth_nb.flows import get_flow

    try:
        config = load_config(config_path)
    except SynthNbError:
        return {}
    raw = config.raw
    flow = get_flow(config.flow)
    out: dict[str, Any] = {}
    keys_of = {**flow.override_keys, **{row.name: row.keys for row in flow.override_rows}}
    for name, paths in keys_of.items():
        for keys in paths:
            value = config_value(raw, keys)
            if value not in (None, ""):
                out[name] = _shown(value)
                break
    return out


class _StandingIn(Protocol):
    @property
    def stand_in(self) -> tuple[str, str] | None: ...


def task_url_field(prepared: Iterable[_StandingIn], own: str) -> tuple[str, str]:
    """What the task URL field shows and says under it: the URL a submission will use. On the embedded backend,
    the bundled app it stands in for a config's own task app that does not answer ("Used: the bundled banking
    app on the embedded backend …"), not the dead URL the TOML names; else the config's own value."""
    used = next((item.stand_in for item in prepared if item.stand_in is not None), None)
    if used is not None:
        return used[0], f"Used: {used[1]}"
    return own, _rows()["task_url"].hint


def _shown(value: Any) -> str:
    """A config value as its field shows it (a list of seeds as ``0-79`` or ``0,1,2``)."""
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        if len(value) > 2 and value == list(range(value[0], value[0] + len(value))):
            return f"{value[0]}-{value[-1]}"
        return ",".join(str(v) for v in value)
    return str(value)


def parse_overrides(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Typed values from the wizard's text fields, and one inline error per bad field.

    Blank means "use the config's value". The library's ``Overrides`` model and the plan builder
    validate again; this gives immediate, field-level feedback for type errors.
    """
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    rows = _rows()
    for name, value in raw.items():
        row = rows.get(name)
        if row is None or value is None or (isinstance(value, str) and not value.strip()):
            continue
        kind = row.kind
        if kind == "seeds":
            try:
                values[name] = row.parse(value)
            except ValueError as exc:
                errors[name] = str(exc)[:1].upper() + str(exc)[1:] + "."
            continue
        if kind == "bool":
            if isinstance(value, bool):
                values[name] = value
            elif str(value).strip().lower() in {"true", "1", "yes", "on"}:
                values[name] = True
            elif str(value).strip().lower() in {"false", "0", "no", "off"}:
                values[name] = False
            else:
                errors[name] = "Expected true or false."
            continue
        text = str(value).strip()
        if kind == "int":
            try:
                number = int(text)
            except ValueError:
                errors[name] = f"Expected a whole number, got {text!r}."
                continue
            if number < 1:
                errors[name] = "Must be at least 1."
                continue
            values[name] = number
        elif kind == "url":
            if not text.startswith(("http://", "https://")):
                errors[name] = "Must start with http:// or https://."
                continue
            values[name] = text
        else:
            values[name] = text
    return values, errors
