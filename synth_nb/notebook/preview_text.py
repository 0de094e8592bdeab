"""Plain-text previews: what the magic prints where widgets cannot render (nbconvert, a console).

Everything shown here is already masked by the library (``plan.preview_json()``,
``SecretBundle.as_masked_dict()``); this module only lays it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from synth_nb.pipeline import Prepared
from synth_nb.secrets import SecretBundle

__all__ = ["preview_text", "secrets_rows"]


def secrets_rows(bundle: SecretBundle | None, required: Iterable[str] = ()) -> list[dict[str, Any]]:
    """``[{"name", "masked", "source", "found"}]`` for every key found, then each ``required`` one missing."""
    if bundle is None:
        return []
    rows = [{"name": name, "masked": info["masked"], "source": info["source"], "found": True}
            for name, info in bundle.as_masked_dict().items()]
    rows += [{"name": name, "masked": "", "source": "", "found": False} for name in bundle.missing(required)]
    return rows


def preview_text(prepared: Sequence[Prepared], *, backend_url: str) -> str:
    """One block per config: flow, secrets (masked), first error or the full masked payload."""
    lines = [f"Backend: {backend_url}"]
    for item in prepared:
        lines.append("")
        config = item.config
        kind = "?" if config is None else config.flow + (f"/{config.algorithm}" if config.algorithm else "")
        lines.append(f"== {item.path.name}  ({kind})")
        for row in secrets_rows(item.secrets, item.required):
            state = f"{row['masked']}  from {row['source']}" if row["found"] else "MISSING"
            lines.append(f"   {row['name']}: {state}")
        for warning in config.warnings if config is not None else []:
            lines.append(f"   warning: {warning}")
        if item.error is not None:
            lines.append(f"   error: {item.error}")
        elif item.plan is not None:
            lines.append(item.plan.preview_json())
    return "\n".join(lines)
