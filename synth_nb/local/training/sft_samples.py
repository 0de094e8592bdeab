"""The samples behind an SFT job's loss: the model's replies to a fixed handful of prompts, step by step.

Before training, at every evaluation (``hyperparameters.eval_steps``) and at the end, the model answers the
first ``SAMPLE_PROMPTS`` validation conversations (the training ones when there is no validation file),
greedily and at most ``MAX_NEW_TOKENS`` tokens, beside the reference answer (the conversation's last assistant
message). The same prompts every time, so the replies can be read changing as the loss falls.

Event ``sft.sample.generated``, one per prompt and evaluation; ``data`` fields (the client's sample views
and run-health rules read these):

* ``step`` (int): the optimiser step the model had reached
* ``example`` (int): which of the fixed prompts (0-based); ``source`` (str): ``"validation"`` or ``"train"``
* ``prompt`` (str): the conversation before the reference (``role: content`` lines); ``prompt_chars`` (int)
* ``reference`` (str): the reference answer; ``reference_chars`` (int)
* ``completion`` (str): the model's greedy reply; ``completion_chars`` (int); ``completion_tokens`` (int)
* ``similarity`` (float): 0-1, how close the reply is to the reference (``difflib`` ratio of the texts)
* ``exact`` (bool): the reply equals the reference (surrounding whitespace aside)
* ``cut`` (bool): a text was longer than ``MAX_TEXT_CHARS`` and was cut (its full length is given)
"""

from __future__ import annotations

import difflib
from typing import Any

from synth_nb.local.training.channel import Channel
from synth_nb.local.training.models import LoadedModel
from synth_nb.local.training.policy_service import sample_tokens, text_logit_mask
from synth_nb.local.training.tokenizer import _content_text, encode_chat

__all__ = ["MAX_NEW_TOKENS", "SAMPLE_EVENT", "SAMPLE_PROMPTS", "SampleProbe"]

SAMPLE_EVENT = "sft.sample.generated"
SAMPLE_PROMPTS = 3
MAX_NEW_TOKENS = 48
MAX_TEXT_CHARS = 2000


def _cut(text: str) -> tuple[str, bool]:
    return (text, False) if len(text) <= MAX_TEXT_CHARS else (text[:MAX_TEXT_CHARS] + "…", True)


def _chat_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"{m.get('role', '?')}: {_content_text(m.get('content'))}" for m in messages)


class SampleProbe:
    """The fixed prompts of a run; ``emit(step)`` answers them with the model as it is now."""

    def __init__(self, loaded: LoadedModel, conversations: list[list[dict[str, Any]]], source: str,
                 max_positions: int) -> None:
        self.loaded = loaded
        self.source = source
        self.items: list[tuple[str, list[int], str]] = []
        for messages in conversations:
            last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
            if last is None or last == 0:
                continue
            ids, _ = encode_chat(loaded.tokenizer, messages[:last], add_generation_prompt=True)
            room = max_positions - MAX_NEW_TOKENS
            if room <= 0:
                break
            self.items.append((_chat_text(messages[:last]), ids[-room:], _content_text(messages[last].get("content"))))
            if len(self.items) == SAMPLE_PROMPTS:
                break
        tok = loaded.tokenizer
        self.stop_ids = {tok.end_id} | ({int(tok.eos_id)} if hasattr(tok, "eos_id") else set())
        self.logit_mask = text_logit_mask(loaded)

    def emit(self, channel: Channel, step: int, model: Any = None) -> None:
        """One ``SAMPLE_EVENT`` per prompt, from the greedy replies of ``model`` (default: the loaded one; TRL
        trains a wrapped one). Sampled on the CPU; a model on another device is not sampled."""
        model = model if model is not None else self.loaded.model
        if next(model.parameters()).device.type != "cpu":
            return
        for example, (prompt_full, ids, reference_full) in enumerate(self.items):
            [seq] = sample_tokens(model, ids, 1, MAX_NEW_TOKENS, 0.0, self.stop_ids, logit_mask=self.logit_mask)
            stopped = bool(seq) and seq[-1] in self.stop_ids
            reply = self.loaded.tokenizer.decode(seq[:-1] if stopped else seq)
            prompt, prompt_cut = _cut(prompt_full)
            reference, reference_cut = _cut(reference_full)
            completion, completion_cut = _cut(reply)
            similarity = difflib.SequenceMatcher(None, reply[:MAX_TEXT_CHARS], reference_full[:MAX_TEXT_CHARS]).ratio()
            data = {"step": step, "example": example, "source": self.source, "prompt": prompt,
                    "prompt_chars": len(prompt_full), "reference": reference, "reference_chars": len(reference_full),
                    "completion": completion, "completion_chars": len(reply), "completion_tokens": len(seq),
                    "similarity": round(similarity, 4), "exact": reply.strip() == reference_full.strip(),
                    "cut": prompt_cut or reference_cut or completion_cut}
            channel.emit(SAMPLE_EVENT, f"step {step} sample {example}: similarity {similarity:.2f} to the reference",
                         data)
