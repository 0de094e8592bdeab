"""Plain-text previews of prepared configs: what the terminal shows before ``Submit?`` and the magic prints where
widgets cannot render (nbconvert, a console), in the words the wizard uses.

Everything shown here is already masked by the library (``plan.preview()``,
``SecretBundle.as_masked_dict()``); this module only lays it out (``preview_layout``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from synth_nb.pipeline.prepare import Prepared
from synth_nb.pipeline.preview_layout import payload_lines, payload_text, step_line, step_rows
from synth_nb.secrets import SecretBundle

__all__ = ["preview_text", "secrets_rows", "source_words", "warning_lines", "warnings_of"]

FOLDED_NOTE = "(long integer lists are folded; --dry-run --json prints them in full)"


def source_words(source: str, folder: Path | None = None) -> str:
    """Where a key came from as a phrase: "found in .env" (the file's path relative to ``folder``: the working
    folder, where ``--env-file .env`` was typed), "pasted into the wizard"…"""
    if source.startswith(".env:"):
        path = source[len(".env:"):]
        try:
            shown = os.path.relpath(path, folder) if folder is not None else path
        except ValueError:  # another drive (Windows)
            shown = path
        return f"found in {shown}"
    if source.startswith("modal:"):
        return f"found in Modal secret {source[len('modal:'):]}"
    if source.startswith("local backend"):  # "local backend (its example task apps)": what it is for
        detail = source[len("local backend"):].strip().removeprefix("(").removesuffix(")")
        return "provided by the embedded local backend" + (f" for {detail}" if detail else "")
    return {"environment": "found in the kernel's environment", "pasted": "pasted into the wizard"}.get(
        source, f"found in {source}")


def secrets_rows(bundle: SecretBundle | None, required: Iterable[str] = (),
                 folder: Path | None = None) -> list[dict[str, Any]]:
    """``[{"name", "masked", "source", "where", "found"}]`` for every key found, then each missing one.

    ``source`` is the library's label (``.env:/path/.env``); ``where`` says it in plain words.
    """
    if bundle is None:
        return []
    rows = [{"name": name, "masked": info["masked"], "source": info["source"],
             "where": source_words(info["source"], folder), "found": True}
            for name, info in bundle.as_masked_dict().items()]
    rows += [{"name": name, "masked": "", "source": "", "where": "", "found": False}
             for name in bundle.missing(required)]
    return rows


def warnings_of(item: Prepared) -> list[str]:
    """The plan's warnings (the config's own, ignored overrides…), or the config's when no plan was built."""
    if item.plan is not None:
        return list(item.plan.warnings)
    return list(item.config.warnings) if item.config is not None else []


def warning_lines(prepared: Sequence[Prepared]) -> list[str]:
    """``warning: sft.toml: unknown key … (did you mean 'n_epochs'?)``, one line per warning."""
    return [f"warning: {item.path.name}: {warning}" for item in prepared for warning in warnings_of(item)]


def preview_text(prepared: Sequence[Prepared], *, backend_url: str) -> str:
    """One block per config: flow, secrets (masked), warnings, first error or the requests and payload."""
    lines = [f"Backend: {backend_url}"]
    for item in prepared:
        lines.append("")
        config = item.config
        kind = ("not loaded: see the error below" if config is None
                else config.flow + (f"/{config.algorithm}" if config.algorithm else ""))
        lines.append(f"== {item.path.name}  ({kind})")
        folder = item.path.parent
        for row in secrets_rows(item.secrets, item.required, Path.cwd()):
            state = f"{row['masked']}  {row['where']}" if row["found"] else "MISSING"
            lines.append(f"   {row['name']}: {state}")
        for warning in warnings_of(item):
            lines.append(f"   warning: {warning}")
        if item.error is not None:
            lines.append(f"   error: {item.error}")
        elif item.plan is not None:
            lines.extend(f"   {i}. {step_line(row)}" for i, row in enumerate(step_rows(item.plan, folder), 1))
            payload = payload_lines(item.plan.preview())
            lines.append(payload_text(payload))
            if any("fold" in line for line in payload):
                lines.append(FOLDED_NOTE)
    return "\n".join(lines)
