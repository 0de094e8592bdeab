"""Plain-text previews: what the magic prints where widgets cannot render (nbconvert, a console).

Everything shown here is already masked by the library (``plan.preview_json()``,
``SecretBundle.as_masked_dict()``); this module only lays it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["preview_text", "secrets_rows"]


def secrets_rows(bundle: Any) -> list[dict[str, Any]]:
    """``[{"name", "masked", "source", "found"}]`` for every key in a ``SecretBundle`` (masked only)."""
    if bundle is None:
        return []
    masked = bundle.as_masked_dict()
    rows = []
    for name, value in masked.items():
        item = bundle.get(name)
        source = getattr(item, "source", None) if item is not None else None
        shown = value.get("masked") if isinstance(value, dict) else value
        if isinstance(value, dict) and not source:
            source = value.get("source")
        rows.append({"name": name, "masked": shown or "", "source": source or "", "found": item is not None})
    for name in getattr(bundle, "missing", []) or []:
        if name not in masked:
            rows.append({"name": name, "masked": "", "source": "", "found": False})
    return rows


def preview_text(prepared: Sequence[Any], *, backend_url: str) -> str:
    """One block per config: flow, secrets (masked), first error or the full masked payload."""
    lines = [f"Backend: {backend_url}"]
    for item in prepared:
        lines.append("")
        config = item.config
        flow = getattr(config, "flow", "?")
        algorithm = getattr(config, "algorithm", None)
        lines.append(f"== {item.path.name}  ({flow}{'/' + algorithm if algorithm else ''})")
        for row in secrets_rows(item.secrets):
            state = f"{row['masked']}  from {row['source']}" if row["found"] else "MISSING"
            lines.append(f"   {row['name']}: {state}")
        for warning in getattr(config, "warnings", None) or []:
            lines.append(f"   warning: {warning}")
        if item.error is not None:
            lines.append(f"   error: {item.error}")
        elif item.plan is not None:
            lines.append(item.plan.preview_json())
    return "\n".join(lines)
