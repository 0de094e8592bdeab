"""Character-class task app: an RL example a tiny byte-level model can learn in minutes on two CPU cores.

Each seed asks for a reply written only in one character class (digits, vowels, capital letters or
punctuation), phrased in one of several ways. The reward is the share of the first ``REPLY_CHARS``
characters of the reply that belong to the class, so a random-init policy already earns a little
(about 0.05) and every extra right character raises it: a dense signal GRPO can climb, and one that
requires reading the prompt. Follows the task-app contract of ``examples.contract``; the policy is called
only through ``policy.config.inference_url``.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request

from synth_nb.local.errors import TaskAppRefusal
from synth_nb.local.examples.contract import KeySource, LocalPolicies, PolicyClient, as_table, build_task_app

__all__ = ["APP_ID", "CLASSES", "REPLY_CHARS", "Instance", "create_app", "instance", "score_reply"]

APP_ID = "synth-nb-charclass"
ENV_NAME = "charclass"
REPLY_CHARS = 8
CLASSES: dict[str, str] = {
    "digits": string.digits,
    "vowels": "aeiou",
    "capital letters": string.ascii_uppercase,
    "punctuation marks": "!?.,;:",
}
_TEMPLATES = ("Only {name}.", "{Name} only!", "Write {name}.")


@dataclass(frozen=True)
class Instance:
    seed: int
    class_name: str
    prompt: str


def instance(seed: int, classes: list[str] | None = None) -> Instance:
    """The task for ``seed`` (deterministic; seeds cycle through ``classes``, default all of them)."""
    names = classes or list(CLASSES)
    name = names[seed % len(names)]
    template = random.Random(seed).choice(_TEMPLATES)
    return Instance(seed, name, template.format(name=name, Name=name.capitalize()))


def score_reply(reply: str, class_name: str) -> float:
    """Share of the first REPLY_CHARS characters that belong to the class (short replies score less)."""
    allowed = CLASSES[class_name]
    return sum(ch in allowed for ch in reply[:REPLY_CHARS]) / REPLY_CHARS


def _describe() -> dict[str, Any]:
    return {"task": {"id": APP_ID, "name": "Character classes", "version": "1.0",
                     "description": "Reply using only the character class the instruction names."},
            "environment": ENV_NAME,
            "dataset": {"id": APP_ID, "name": "charclass", "classes": list(CLASSES), "default_split": "train",
                        "splits": ["train", "test"], "instances": "unbounded (seed -> instance)"},
            "rubric": {"outcome": f"share of the first {REPLY_CHARS} reply characters in the requested class"},
            "inference": {"tool": None, "max_tokens": REPLY_CHARS + 4},
            "limits": {"max_turns": 1, "max_response_tokens": REPLY_CHARS + 4}}


def _instance(body: dict[str, Any]) -> tuple[Instance, dict[str, Any], str]:
    """The rollout's task, policy config and inference URL; 422 naming the first bad field."""
    for name in ("run_id", "env", "policy", "ops", "mode"):
        if name not in body:
            raise TaskAppRefusal(422, f"rollout request is missing '{name}'")
    env = as_table(body["env"])
    seed = env.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise TaskAppRefusal(422, f"env.seed must be a non-negative integer, got {seed!r}")
    config = as_table(as_table(body["policy"]).get("config"))
    url = config.get("inference_url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise TaskAppRefusal(422, "policy.config.inference_url is required (an OpenAI-compatible base URL)")
    classes = as_table(env.get("config")).get("classes")
    if classes is not None and (not isinstance(classes, list) or not classes
                                or any(c not in CLASSES for c in classes)):
        raise TaskAppRefusal(422, f"env.config.classes must be a non-empty list drawn from {list(CLASSES)}")
    return instance(seed, classes), config, url


async def _rollout(body: dict[str, Any], policy: PolicyClient) -> dict[str, Any]:
    task, config, url = _instance(body)
    messages = [{"role": "user", "content": task.prompt}]
    request = {"model": config.get("model") or "policy", "messages": messages,
               "temperature": config.get("temperature", 1.0),
               "max_tokens": config.get("max_tokens") or config.get("max_completion_tokens") or REPLY_CHARS + 4}
    completion = await policy.complete(url, request)
    try:
        reply = str(completion["choices"][0]["message"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise TaskAppRefusal(502, "the policy's reply is not an OpenAI chat completion") from None
    reward = score_reply(reply, task.class_name)
    trace_id = config.get("trace_correlation_id")
    obs = {"prompt": task.prompt, "class": task.class_name, "seed": task.seed}
    step = {"obs": obs, "tool_calls": [], "reward": reward, "done": True, "truncated": None,
            "info": {"reply": reply, "messages": messages, "meta": {"inference_url": url}}}
    policy_id = as_table(body["policy"]).get("policy_id") or "policy"
    return {"run_id": body["run_id"],
            "trajectories": [{"env_id": f"{ENV_NAME}::{task.seed}", "policy_id": policy_id,
                              "steps": [step], "final": {"observation": obs, "reward": reward}, "length": 1,
                              "inference_url": url, "decision_samples": None, "trace_correlation_id": trace_id}],
            "branches": {},
            "metrics": {"episode_returns": [reward], "mean_return": reward, "num_steps": 1, "num_episodes": 1,
                        "outcome_score": reward, "details": {"class": task.class_name, "reply": reply},
                        # the reward's two parts: how much of the scored window is filled, and by the right class
                        "reward_components": {"filled": min(len(reply), REPLY_CHARS) / REPLY_CHARS,
                                              "in_class": reward}},
            "aborted": False, "ops_executed": len(body["ops"]) if isinstance(body["ops"], list) else 2,
            "trace_correlation_id": trace_id, "trace": None,
            "pipeline_metadata": {"trace_correlation_id": trace_id, "inference_url": url}}


async def _info(request: Request) -> dict[str, Any]:
    described = _describe()
    return {"service": {"task": described["task"], "version": "1.0"}, "dataset": described["dataset"],
            "rubrics": {"outcome": described["rubric"]["outcome"], "events": None},
            "inference": described["inference"], "limits": described["limits"]}


async def _task_info(request: Request) -> Any:
    raw = request.query_params.getlist("seed") + request.query_params.getlist("seeds")
    if not raw:
        return {"taskset": _describe()}
    try:
        seeds = [int(s) for s in raw]
    except ValueError:
        raise TaskAppRefusal(422, f"seed must be an integer, got {raw}") from None
    infos = [{**_describe(), "task_metadata": {"seed": s, "prompt": instance(s).prompt,
                                               "class": instance(s).class_name}} for s in seeds]
    return infos[0] if len(infos) == 1 else infos


def create_app(api_key: KeySource = None, *, policy_api_key: str | None = None,
               local_policies: LocalPolicies | None = None) -> Starlette:
    """The task app; ``api_key`` None means "read ENVIRONMENT_API_KEY at request time".

    ``policy_api_key`` is sent to the policy as a bearer token; by default the policy gets no credentials.
    ``local_policies``: the policies this process serves itself, called without HTTP (``examples.contract``).
    """
    return build_task_app(app_id=APP_ID, api_key=api_key, info=_info, task_info=_task_info, rollout=_rollout,
                          policy_api_key=policy_api_key, local_policies=local_policies)
