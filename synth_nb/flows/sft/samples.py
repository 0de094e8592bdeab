"""An SFT job's sample completions (``sft.sample.generated`` events) as rows of a ``SampleTable``.

The embedded backend documents the event's fields in ``synth_nb.local.training.sft_samples``: at each
evaluation, the model's greedy reply to a fixed handful of prompts beside the reference answer. A hosted
backend that streams the same event type is read the same way; a job without such events has none.
"""

from __future__ import annotations

from typing import Any

from synth_nb.flows.sample_rows import SampleSpec, as_int, as_number, as_text

__all__ = ["SAMPLES", "SAMPLE_EVENT", "sample_row"]

SAMPLE_EVENT = "sft.sample.generated"
_COLUMNS = (("step", "step"), ("example", "prompt #"), ("source", "from"), ("similarity", "similarity"),
            ("exact", "exact"), ("completion_tokens", "tokens"))
_TEXTS = (("prompt", "prompt"), ("reference", "reference"), ("completion", "completion"))
_NOTES = ("At each evaluation the model answers the same few prompts greedily; similarity is how close its "
          "reply is to the reference answer (0–1, a character-level ratio), exact whether it matches.",)


def sample_row(data: Any) -> dict[str, Any]:
    data = data if isinstance(data, dict) else {}
    texts = {key: as_text(data.get(key)) for key in ("prompt", "reference", "completion")}
    source = data.get("source")
    row: dict[str, Any] = {
        "step": as_int(data.get("step")), "example": as_int(data.get("example")),
        "source": source if source in ("validation", "train") else None,
        "similarity": as_number(data.get("similarity")),
        "exact": data["exact"] if isinstance(data.get("exact"), bool) else None,
        "completion_tokens": as_int(data.get("completion_tokens")),
    }
    for key, (text, length) in texts.items():
        row[key] = text
        row[f"{key}_chars"] = max(length, as_int(data.get(f"{key}_chars")) or 0)
    return row


SAMPLES = SampleSpec(kind="samples", title="SFT samples", event_types=frozenset({SAMPLE_EVENT}), row=sample_row,
                     columns=_COLUMNS, texts=_TEXTS, score_key="similarity", score_label="similarity",
                     highlight_phase=None, notes=_NOTES)
