"""The reference pages, generated from the code each time the site is built (an MkDocs hook).

Nothing here is written by hand: the commands and flags come from each sub-command's own ``configure``
(the argparse parsers ``synth-nb`` runs), the ``%synth_train`` arguments from the magic's own parser (the one
flag and override table, the flows' own rows included), the config keys from each registered flow's config
model, the exit codes from the exception tree. A new flag, flow, key or error shows up in the docs with no
page edited. ``python docs/_gen/reference.py OUT`` writes the pages to a folder, to read them without a build.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: generated page (relative to docs/) -> the function that writes it
PAGES = {
    "reference/cli.md": "cli_page",
    "reference/magic.md": "magic_page",
    "reference/config-keys.md": "config_keys_page",
    "reference/exit-codes.md": "exit_codes_page",
}
NOTE = "<!-- generated from the code at build time (docs/_gen/reference.py): do not edit -->\n\n"


def _cell(text: object) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """An action's help as ``--help`` prints it (``%(default)s`` expanded, ``%%`` a percent sign)."""
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return str(parser._get_formatter()._expand_help(action))


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return " | ".join(str(c) for c in action.choices)
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    text = str(metavar)
    if action.nargs in ("*", "+"):
        text += " ..."
    return text


def _default(action: argparse.Action) -> str:
    """The default to show in its own column: none when the help already says it (``[default: 3600]``)."""
    if action.help and "default" in action.help:
        return ""
    default = action.default
    if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 and default is False:
        return ""
    if isinstance(default, (list, tuple)) and not default:
        return ""
    return _code(str(default))


def flag_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str, str, str]]:
    """(flags, value, default, help) for each argument of ``parser`` (``-h`` left out)."""
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue  # what --help does not show (-h itself, a flag kept hidden)
        if action.option_strings:
            names = ", ".join(_code(flag) for flag in action.option_strings)
        else:
            names = _code(str(action.metavar or action.dest))
        rows.append((names, _code(_value(action)) if _value(action) else "", _default(action),
                     _help(parser, action)))
    return rows


def _flag_table(parser: argparse.ArgumentParser) -> str:
    lines = ["| Flag | Value | Default | What it does |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in flag_rows(parser)]
    return "\n".join(lines) + "\n"


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Each ``synth-nb`` sub-command's parser, built by its own module's ``configure`` as ``synth-nb`` does."""
    from synth_nb.cli.main import COMMANDS

    parsers = {}
    for name, (module_name, help_text) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"synth-nb {name}", description=help_text)
        importlib.import_module(module_name).configure(parser)
        parsers[name] = parser
    return parsers


def cli_page() -> str:
    from synth_nb.cli.main import COMMANDS

    out = [NOTE, "# Commands and flags\n\n",
           "Every `synth-nb` command with every flag and its help, as `synth-nb COMMAND --help` prints them. "
           "How the commands behave on a terminal and off it: [The terminal, in detail](terminal.md); "
           "exit codes: [Exit codes](exit-codes.md).\n\n",
           "| Command | What it does |\n|---|---|\n"]
    out += [f"| [`synth-nb {name}`](#synth-nb-{name}) | {_cell(help_text)} |\n"
            for name, (_module, help_text) in COMMANDS.items()]
    for name, parser in command_parsers().items():
        usage = parser.format_usage().strip()
        out += [f"\n## synth-nb {name}\n\n", f"{_cell(parser.description)}\n\n", f"```text\n{usage}\n```\n\n"]
        out.append(_flag_table(parser))
        if parser.epilog:  # examples and notes a command's --help prints under its flags
            out.append(f"\n```text\n{inspect.cleandoc(parser.epilog)}\n```\n")
    return "".join(out)


def magic_parser() -> argparse.ArgumentParser:
    """The parser ``%synth_train`` reads its line with (IPython's ``magic_arguments`` keeps it on the magic)."""
    from synth_nb.notebook.magics import SynthMagics

    return SynthMagics.synth_train.parser  # type: ignore[attr-defined,no-any-return]


def magic_page() -> str:
    from synth_nb.notebook.magics import HELP_INTRO

    first, _, rest = HELP_INTRO.strip().partition("\n")
    return "".join([
        NOTE, "# `%synth_train` arguments\n\n", f"{first.strip()}\n\n",
        "`%load_ext synth_nb` registers it; `%synth_train?` prints the same help. The arguments are the ones "
        "`synth-nb train` takes, from the same table: a flag means the same in both places. How the magic, "
        "its wizard and its panel behave: [The notebook, in detail](notebook.md).\n\n",
        f"```text\n{rest.strip()}\n```\n\n" if rest.strip() else "",
        "## Arguments\n\n", _flag_table(magic_parser()),
    ])


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """A JSON-schema type in a few words: ``integer > 0``, ``string | null``, ``"gepa" | "mipro"``."""
    if "$ref" in schema:
        return "table"
    if "anyOf" in schema:
        return " | ".join(dict.fromkeys(_type(s, defs) for s in schema["anyOf"]))
    if "enum" in schema:
        return " | ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in schema["enum"])
    if "const" in schema:
        return f'"{schema["const"]}"' if isinstance(schema["const"], str) else str(schema["const"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}), defs)}"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"table of {_type(extra, defs)}" if isinstance(extra, dict) and extra else "table"
    bounds = [(">", "exclusiveMinimum"), (">=", "minimum"), ("<", "exclusiveMaximum"), ("<=", "maximum")]
    # a bound of 2**63 - 1 only says "a 64-bit integer": left out
    limits = [f"{sign} {schema[key]:,}" if isinstance(schema[key], int) else f"{sign} {schema[key]}"
              for sign, key in bounds if key in schema and abs(schema[key]) < 2**62]
    return " ".join([str(kind), *limits])


def _tables(schema: dict[str, Any], defs: dict[str, Any], prefix: str,
            title: str = "") -> Iterable[tuple[str, str, list[list[str]]]]:
    """(title, what the table's model says of itself, rows) for the table at ``schema`` (``[a.b]``, or ``[[a.b]]`` for an array of tables) and every
    table nested in it, depth first."""
    rows, nested = [], []
    required = set(schema.get("required", ()))
    for key, prop in schema.get("properties", {}).items():
        refs = [prop] if "$ref" in prop else [s for s in prop.get("anyOf", ()) if "$ref" in s]
        arrays = [s for s in (prop, *prop.get("anyOf", ())) if s.get("type") == "array" and "$ref" in s.get("items", {})]
        default = prop.get("default")
        shown = "required" if key in required else ("" if default is None else _code(repr(default)))
        about = prop.get("description", "")
        rows.append([_code(key), _type(prop, defs), shown, about])
        name = f"{prefix}.{key}" if prefix else key
        nested += [(f"[{name}]", ref) for ref in refs] + [(f"[[{name}]]", a["items"]) for a in arrays]
    if rows:
        yield title, str(schema.get("description", "")), rows
    for name, ref in nested:
        yield from _tables(defs[ref["$ref"].rsplit("/", 1)[-1]], defs, name.strip("[]"), name)


def config_keys_page() -> str:
    from synth_nb.flows.registry import all_flows

    out = [NOTE, "# Config keys\n\n",
           "Every table and key each flow validates, read from the flow's config model: its type, allowed "
           "values and default. A key not listed is kept and named in a warning; a wrong value is an error "
           "naming the file, the line and the dotted key. What else a config means: [Configs](configs.md).\n"]
    for flow in all_flows():
        model = flow.config_model
        schema = model.model_json_schema()
        defs = schema.get("$defs", {})
        out.append(f"\n## {flow.name}\n\n")
        doc = inspect.getdoc(model)
        if doc:
            out.append(" ".join(doc.split("\n\n")[0].split()) + "\n\n")
        for table, about, rows in _tables(schema, defs, ""):
            out.append(f"### `{table}`\n\n" if table else f"### Top level ({flow.name})\n\n")
            if about and table:
                out.append(" ".join(about.split("\n\n")[0].split()) + "\n\n")
            described = any(row[3] for row in rows)  # a column of what the keys' own descriptions say, if any
            out.append("| Key | Type | Default | About |\n|---|---|---|---|\n" if described
                       else "| Key | Type | Default |\n|---|---|---|\n")
            out += ["| " + " | ".join(_cell(c) for c in (row if described else row[:3])) + " |\n" for row in rows]
            out.append("\n")
    return "".join(out)


def exit_codes_page() -> str:
    from synth_nb import errors
    from synth_nb.cli import main

    process = inspect.getdoc(main) or ""
    said = next((p for p in process.split("\n\n") if p.startswith("Exit codes")), "")
    classes = [c for _n, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, errors.SynthNbError) and c.__module__ == errors.__name__]
    classes.sort(key=lambda c: (len(c.__mro__), c.__name__))
    out = [NOTE, "# Exit codes\n\n", " ".join(said.split()), "\n\n",
           "| Code | Means |\n|---|---|\n",
           "| 0 | success (also a job the watchdog stopped at a limit you set) |\n",
           "| 1 | the job failed, was cancelled or timed out, or the backend failed or answered out of bounds |\n",
           "| 2 | a usage or config error: nothing was sent |\n",
           f"| 130 | interrupted (Ctrl-C) |\n| {main.EXIT_OUTPUT_CLOSED} | the reader of the output went away |\n\n",
           "## Errors and their codes\n\n",
           "Every error synth-nb raises on purpose is one of these (`synth_nb.errors`); a command that ends on "
           "one prints `error: <message>` and exits with its code. In a notebook the magic shows the message.\n\n",
           "| Error | Is a | Exit code | When |\n|---|---|---|---|\n"]
    for cls in classes:
        parent = cls.__mro__[1].__name__ if cls is not errors.SynthNbError else "Exception"
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0]
        out.append(f"| `{cls.__name__}` | `{parent}` | {cls.exit_code} | {_cell(doc)} |\n")
    return "".join(out)


def pages() -> dict[str, str]:
    here = sys.modules[__name__]
    return {path: getattr(here, builder)() for path, builder in PAGES.items()}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated pages to the build (they are never files in docs/)."""
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "site-reference")
    for path, text in pages().items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text, encoding="utf-8")
        print(target / path)
