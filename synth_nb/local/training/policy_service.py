"""Serving the model under training as an OpenAI-compatible chat policy, inside the worker process.

Chat requests arrive from the backend's policy route through the worker's stdin (tagged with the policy
slot they came in on, i.e. which rollout made them). Requests with the same prompt are sampled as one
batch, and the prompt and sampled token ids are recorded per slot so the trainer can pair them with the
reward the task app reports for that rollout.

Sampling runs where the model's weights are (``sample_tokens`` builds its tensors there; the RL worker's
generator and logit mask live there too); only the sampled token ids come back to the CPU, to be decoded.
"""

from __future__ import annotations

import queue
import time
import uuid
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import torch

from synth_nb.local.training.channel import Channel
from synth_nb.local.training.device import Device
from synth_nb.local.training.models import LoadedModel
from synth_nb.local.training.tokenizer import encode_chat

__all__ = ["PolicyService", "Sample", "sample_tokens", "text_logit_mask"]


@dataclass
class Sample:
    prompt_ids: list[int]
    completion_ids: list[int]
    #: the chat messages the policy was asked with, as ``role: content`` lines (what a rollout view shows)
    prompt_text: str = ""
    #: the reply the task app got
    completion_text: str = ""


def _chat_text(messages: list[Any]) -> str:
    """``role: content`` per message; list contents (parts) keep their text parts."""
    lines = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        lines.append(f"{m.get('role', '?')}: {'' if content is None else content}")
    return "\n".join(lines)


@torch.no_grad()
def sample_tokens(model: Any, prompt_ids: list[int], n: int, max_new: int, temperature: float,
                  stop_ids: set[int], generator: torch.Generator | None = None,
                  logit_mask: torch.Tensor | None = None) -> list[list[int]]:
    """``n`` completions of one prompt with a KV cache; temperature 0 is greedy. Stop tokens are kept.

    ``logit_mask`` (0 / -inf per vocabulary entry) restricts what may be sampled; training must apply it too.
    The prompt is put on the model's device; ``generator`` and ``logit_mask`` must be there already.
    """
    was_training = model.training
    model.eval()
    warnings.filterwarnings("ignore", message=".*past_key_values.*", category=FutureWarning)
    device = next(model.parameters()).device
    out = model(input_ids=torch.tensor([prompt_ids] * n, device=device), use_cache=True)
    past, logits = out.past_key_values, out.logits[:, -1, :]
    seqs: list[list[int]] = [[] for _ in range(n)]
    done = [False] * n
    for _ in range(max_new):
        logits = logits.float() if logit_mask is None else logits.float() + logit_mask
        if temperature <= 0:
            chosen = logits.argmax(-1)
        else:
            probs = torch.softmax(logits / temperature, dim=-1)
            chosen = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        for i, token in enumerate(chosen.tolist()):
            if not done[i]:
                seqs[i].append(token)
                done[i] = token in stop_ids
        if all(done):
            break
        out = model(input_ids=chosen[:, None], past_key_values=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[:, -1, :]
    model.train(was_training)
    return seqs


def text_logit_mask(loaded: LoadedModel) -> torch.Tensor | None:
    """For the byte tokenizer: only text bytes and the end token may be sampled (0 / -inf per token); on the
    device the model's weights are on now."""
    allowed = getattr(loaded.tokenizer, "text_token_ids", None)
    if allowed is None:
        return None
    weight = loaded.model.get_output_embeddings().weight
    mask = torch.full((int(weight.shape[0]),), float("-inf"), device=weight.device)
    mask[torch.tensor(allowed(), device=weight.device)] = 0.0
    return mask


class PolicyService:
    """Answers chat requests from the current weights; ``records[slot]`` collects what was sampled.

    ``loaded.model`` must be on ``device`` already: the generator and the logit mask are made there."""

    def __init__(self, loaded: LoadedModel, channel: Channel, *, max_new_tokens: int, seed: int,
                 device: Device) -> None:
        self.loaded = loaded
        self.channel = channel
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.temperature = 1.0
        self.records: dict[int, list[Sample]] = defaultdict(list)
        self.generator = torch.Generator(device=device.torch_device).manual_seed(seed)
        tok = loaded.tokenizer
        self.stop_ids = {tok.end_id} | ({int(tok.eos_id)} if hasattr(tok, "eos_id") else set())
        self.logit_mask = text_logit_mask(loaded)
        self.tokens_generated = 0
        #: prompt and completion tokens of every answer: the job's token count, as the policy route reports usage
        self.tokens_served = 0
        self._generation_seconds = 0.0

    def take_generation_seconds(self) -> float:
        """Time spent sampling since the last call."""
        spent, self._generation_seconds = self._generation_seconds, 0.0
        return spent

    def start_phase(self, temperature: float) -> None:
        """A new set of rollouts: forget old records; temperature 0 means greedy (evaluation)."""
        self.records.clear()
        self.temperature = temperature

    def _prompt(self, request: dict[str, Any], max_new: int) -> list[int]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("chat request has no messages")
        ids, _ = encode_chat(self.loaded.tokenizer, messages, add_generation_prompt=True)
        room = self.loaded.max_positions - max_new
        return ids[-room:]

    def _max_new(self, request: dict[str, Any]) -> int:
        asked = request.get("max_completion_tokens") or request.get("max_tokens") or self.max_new_tokens
        return max(1, min(int(asked), self.max_new_tokens))

    def serve(self, wait_s: float = 0.02, gather_s: float = 0.01) -> int:
        """Answer the requests that are waiting (batched by prompt); returns how many were answered."""
        try:
            first = self.channel.chat_requests.get(timeout=wait_s)
        except queue.Empty:
            return 0
        pending = [first]
        deadline = time.monotonic() + gather_s
        while time.monotonic() < deadline:
            try:
                pending.append(self.channel.chat_requests.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        groups: dict[tuple[tuple[int, ...], int], list[dict[str, Any]]] = defaultdict(list)
        for msg in pending:
            try:
                max_new = self._max_new(msg["request"])
                groups[(tuple(self._prompt(msg["request"], max_new)), max_new)].append(msg)
            except (ValueError, TypeError, KeyError) as exc:
                self.channel.respond(msg.get("id", ""), error=f"bad chat request: {exc}")
        for (prompt, max_new), msgs in groups.items():
            started = time.perf_counter()
            with self.device.autocast():
                seqs = sample_tokens(self.loaded.model, list(prompt), len(msgs), max_new, self.temperature,
                                     self.stop_ids, self.generator, self.logit_mask)
            self._generation_seconds += time.perf_counter() - started
            for msg, seq in zip(msgs, seqs, strict=True):
                stopped = bool(seq) and seq[-1] in self.stop_ids
                text = self.loaded.tokenizer.decode(seq[:-1] if stopped else seq)
                self.records[int(msg.get("slot", -1))].append(
                    Sample(list(prompt), seq, _chat_text(msg["request"].get("messages") or []), text))
                self.tokens_generated += len(seq)
                self.tokens_served += len(prompt) + len(seq)
                self.channel.respond(msg["id"], self._completion(msg["request"], list(prompt), seq, text, stopped))
        return len(pending)

    def _completion(self, request: dict[str, Any], prompt: list[int], seq: list[int], text: str,
                    stopped: bool) -> dict[str, Any]:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
                "model": str(request.get("model") or "local-policy"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop" if stopped else "length"}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(seq),
                          "total_tokens": len(prompt) + len(seq)}}

    def refuse_all(self, reason: str) -> None:
        """Answer every waiting request with an error (used when stopping)."""
        while True:
            try:
                msg = self.channel.chat_requests.get_nowait()
            except queue.Empty:
                return
            self.channel.respond(msg.get("id", ""), error=reason)
