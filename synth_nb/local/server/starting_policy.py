"""An RL job's starting model as a chat policy, for the dry rollout (imports torch and transformers).

The model is loaded the way the job's worker loads it (same model choice, seed and tiny shape), sampled
at the job's training temperature, and the rollout request has the shape the worker sends, so the dry
rollout sees what the first training step will see.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import httpx
import torch

from synth_nb.local.errors import ExecutorInputError, TaskAppError, UnknownLocalModel
from synth_nb.local.executors._training import local_settings, section
from synth_nb.local.executors.rl import _model_name, _task_url, rl_settings
from synth_nb.local.training.model_choice import choose_model
from synth_nb.local.training.models import load_model
from synth_nb.local.training.policy_service import sample_tokens, text_logit_mask
from synth_nb.local.training.task_app_client import rollout_reward
from synth_nb.local.training.tokenizer import encode_chat

__all__ = ["StartingPolicy"]


class StartingPolicy:
    """Answers chat completions from the untrained model and runs one rollout against the task app."""

    def __init__(self, body: dict[str, Any], environment_api_key: str | None) -> None:
        try:
            self.choice = choose_model(_model_name(body))
        except UnknownLocalModel as exc:
            raise ExecutorInputError(str(exc)) from None
        self.settings = {**rl_settings(body, self.choice), **local_settings(body)}
        url = _task_url(body)
        if not url or not url.startswith(("http://", "https://")):
            raise ExecutorInputError("data.endpoint_base_url (services.task_url) must be the task app's http(s) URL")
        self.task_url = url
        given = section(body, "metadata").get("task_app_api_key")
        self.key = given if isinstance(given, str) and given else (
            environment_api_key or os.environ.get("ENVIRONMENT_API_KEY"))
        label = section(body, "data", "config", "model").get("label")
        self.label = str(label or ("synth-nb-tiny-gpt2" if self.choice.kind == "tiny" else self.choice.requested))
        seed = int(self.settings["seed"])
        self.loaded = load_model(self.choice, seed=seed, tiny_overrides=self.settings["tiny"])
        self.generator = torch.Generator().manual_seed(seed)
        self.mask = text_logit_mask(self.loaded)
        tok = self.loaded.tokenizer
        self.stop_ids = {tok.end_id} | ({int(tok.eos_id)} if hasattr(tok, "eos_id") else set())

    def describe(self) -> dict[str, Any]:
        return {"policy": "starting model", "model": self.loaded.description, "reason": self.choice.reason}

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("chat request has no messages")
        limit = int(self.settings["max_new_tokens"])
        max_new = max(1, min(int(request.get("max_completion_tokens") or request.get("max_tokens") or limit), limit))
        ids, _ = encode_chat(self.loaded.tokenizer, messages, add_generation_prompt=True)
        prompt = ids[-(self.loaded.max_positions - max_new):]
        (seq,) = sample_tokens(self.loaded.model, prompt, 1, max_new, float(self.settings["temperature"]),
                               self.stop_ids, self.generator, self.mask)
        stopped = bool(seq) and seq[-1] in self.stop_ids
        text = self.loaded.tokenizer.decode(seq[:-1] if stopped else seq)
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
                "model": self.label, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                  "finish_reason": "stop" if stopped else "length"}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(seq),
                          "total_tokens": len(prompt) + len(seq)}}

    def rollout(self, inference_url: str, seed: int) -> tuple[float | None, str | None]:
        """``POST /rollout`` for ``seed`` with the worker's request shape: ``(reward, None)`` or ``(None, why)``."""
        s = self.settings
        cid = f"dry-{uuid.uuid4().hex[:12]}"
        payload = {
            "run_id": cid, "mode": "rl", "ops": s["ops"],
            "env": {"env_name": s.get("env_name"), "config": s.get("env_config", {}), "seed": seed},
            "policy": {"policy_name": s.get("policy_name"), "config": {
                **s.get("policy_config", {}), "model": self.label, "inference_url": f"{inference_url}?cid={cid}",
                "trace_correlation_id": cid, "temperature": s["temperature"], "top_p": 1.0,
                "max_tokens": s["max_new_tokens"]}},
            "record": {"trajectories": True, "logprobs": False, "value": False, "return_trace": False},
            "on_done": "reset", "safety": {"max_ops": 100000, "max_time_s": 3600.0}}
        with httpx.Client(timeout=httpx.Timeout(120.0, connect=5.0)) as http:
            try:
                return rollout_reward(http, self.task_url, payload, self.key), None
            except TaskAppError as exc:
                return None, str(exc)
