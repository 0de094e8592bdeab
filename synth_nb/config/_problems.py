"""Turn pydantic errors and unknown keys into messages a person can act on.

Messages never echo values of secret-looking keys, and never show a pydantic traceback.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from synth_nb.config._source import format_key
from synth_nb.flows.schema import Problem
from synth_nb.secrets import mask
from synth_nb.secrets.redact import is_secret_key, shown

__all__ = ["pydantic_problems", "unknown_keys"]

KeyPath = tuple[str | int, ...]

_TYPE_WORDS = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "an array",
    "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
}


def _show(key: KeyPath, value: Any) -> str:
    leaf = next((p for p in reversed(key) if isinstance(p, str)), "")
    if is_secret_key(leaf):
        return mask(str(value)) or "(empty)"
    text = shown(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_hint(leaf: str, value: Any) -> str:
    """How to fix a value of the wrong type; a quoted number is the common case."""
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return f"change the value of {leaf}"
        if number == number and abs(number) != float("inf"):
            return f"write the number without quotes: {leaf.rpartition('.')[2]} = {value.strip()}"
    return f"change the value of {leaf}"


def _kind(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "an array",
             dict: "a table"}
    return names.get(type(value), type(value).__name__)


def _annotation_at(model: type[BaseModel], loc: KeyPath) -> Any:
    """The annotation of the field ``loc`` points at (``None`` when it cannot be followed)."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else None
        elif isinstance(current, type) and issubclass(current, BaseModel) and part in current.model_fields:
            current = current.model_fields[part].annotation
        else:
            return None
    return _unwrap(current)


def _unwrap(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else annotation
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation


def _is_table(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _siblings(raw: Any, parent: KeyPath) -> list[str]:
    node = raw
    for part in parent:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return []
    return [k for k in node if isinstance(k, str)] if isinstance(node, Mapping) else []


def pydantic_problems(exc: PydanticValidationError, model: type[BaseModel], raw: Mapping[str, Any]) -> list[Problem]:
    """One :class:`Problem` per pydantic error, keyed by the dotted TOML path."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc: KeyPath = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
        kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
        leaf = format_key(loc) or "the document"
        if kind == "missing":
            annotation = _annotation_at(model, loc)
            parent, name = loc[:-1], str(loc[-1]) if loc else ""
            table = f"[{format_key(parent)}]" if parent else "the top level"
            choices = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Literal else ()
            if _is_table(annotation):
                message, hint = f"[{leaf}] section is required", f"add a [{leaf}] table"
            elif len(choices) == 1:
                message, hint = f"{name} is required", f"add {name} = \"{choices[0]}\" to {table}"
            elif choices:
                options = " or ".join(f'"{c}"' for c in choices)
                message, hint = f"{name} is required", f"add {name} = {options} to {table}"
            else:
                message, hint = f"{name} is required", f"add {name} = ... to {table}"
            close = difflib.get_close_matches(name, _siblings(raw, parent), n=1, cutoff=0.75)
            if close:
                hint = f"found {close[0]!r} in {table}: did you mean {name!r}?"
            problems.append(Problem(loc, message, hint))
        elif kind == "finite_number":
            problems.append(Problem(loc, f"must be a finite number (got {value!r})",
                                    "inf and nan cannot be sent as JSON; use a number"))
        elif kind in _TYPE_WORDS:
            problems.append(Problem(loc, f"must be {_TYPE_WORDS[kind]} (got {_kind(value)})",
                                    _type_hint(leaf, value)))
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
            bound = next(iter(ctx.values()), "?")
            problems.append(Problem(loc, f"must be {op} {bound} (got {_show(loc, value)})",
                                    f"use a value {op} {bound}"))
        elif kind == "literal_error":
            expected = ctx.get("expected", "")
            problems.append(Problem(loc, f"must be one of {expected} (got {_show(loc, value)})",
                                    f"set {leaf} to one of {expected}"))
        elif kind == "string_pattern_mismatch":
            options = str(ctx.get("pattern", "")).strip("^$()").replace("|", ", ")
            problems.append(Problem(loc, f"must be one of {options} (got {_show(loc, value)})",
                                    f"set {leaf} to one of {options}"))
        elif kind == "string_too_short":
            problems.append(Problem(loc, "must not be empty", f"give {leaf} a value"))
        else:
            message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
            problems.append(Problem(loc, message, f"check the value of {leaf}"))
    return problems


def unknown_keys(model: BaseModel, prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, str | None]]:
    """Yield ``(path, suggestion)`` for every key the schema does not declare."""
    fields = type(model).model_fields
    for key in (model.model_extra or {}):
        close = [c for c in difflib.get_close_matches(key, list(fields), n=3, cutoff=0.8)
                 if abs(len(c) - len(key)) <= 2]
        yield (*prefix, key), (close[0] if close else None)
    for name in fields:
        value = getattr(model, name, None)
        if isinstance(value, BaseModel):
            yield from unknown_keys(value, (*prefix, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from unknown_keys(item, (*prefix, name, index))
