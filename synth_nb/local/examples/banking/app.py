"""The banking intent task app, on the task-app contract of ``examples.contract``.

A rollout renders its own baseline messages for the seed, calls the policy at
``policy.config.inference_url`` as an OpenAI-compatible chat completion (tool call required) and scores
the reply 1.0 for the gold intent, else 0.0 — the same data path a hosted optimiser drives.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request

from synth_nb.local.errors import TaskAppRefusal
from synth_nb.local.examples.banking.dataset import TOOL_NAME, BankingDataset, Example, load_dataset
from synth_nb.local.examples.contract import KeySource, LocalPolicies, PolicyClient, as_table, build_task_app

__all__ = ["APP_ID", "create_app", "policy_request", "seed_policy_requests"]

APP_ID = "synth-nb-banking"
ENV_NAME = "banking"


def _tool_schema(intents: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": TOOL_NAME, "description": "Return the single intent label of the customer query.",
        "parameters": {"type": "object", "properties": {"intent": {"type": "string", "enum": list(intents)}},
                       "required": ["intent"]}}}


def policy_request(dataset: BankingDataset, query: str, policy_config: dict[str, Any]) -> dict[str, Any]:
    """The chat request a rollout of ``query`` sends to the policy (the seed prompt's messages)."""
    return {"model": policy_config.get("model") or "policy", "messages": dataset.render_messages(query),
            "temperature": policy_config.get("temperature", 0.0),
            "max_tokens": policy_config.get("max_completion_tokens") or policy_config.get("max_tokens") or 64,
            "tools": [_tool_schema(dataset.intents)], "tool_choice": "required"}


def seed_policy_requests() -> list[dict[str, Any]]:
    """The policy requests of the seed prompt, one per query of every split of the bundled dataset: what the
    embedded backend's offline policy encodes as it loads, before the first job asks."""
    dataset = load_dataset()
    return [policy_request(dataset, example.query, {}) for rows in dataset.splits.values() for example in rows]


def _predicted_intent(completion: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The ``intent`` argument of the tool call, else the first word of the text reply."""
    try:
        message = completion["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None, []
    tool_calls = message.get("tool_calls") or []
    for call in tool_calls:
        function = call.get("function") or {}
        try:
            args = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            continue
        if isinstance(args, dict) and isinstance(args.get("intent"), str):
            return args["intent"].strip(), tool_calls
    content = (message.get("content") or "").strip()
    return (content.split()[0].strip("`'\".,:;") if content else None), tool_calls


def _trace_id(policy_config: dict[str, Any], inference_url: str) -> str | None:
    explicit = policy_config.get("trace_correlation_id") or policy_config.get("trace")
    if explicit:
        return str(explicit)
    query = parse_qs(urlsplit(inference_url).query)
    for key in ("cid", "trace_correlation_id", "trace"):
        if query.get(key):
            return query[key][0]
    return None


class BankingTaskApp:
    """Route handlers over one dataset."""

    def __init__(self, dataset: BankingDataset) -> None:
        self.dataset = dataset

    def describe(self) -> dict[str, Any]:
        return {
            "task": {"id": APP_ID, "name": "Banking intent classification",
                     "description": "Classify a retail-banking customer message into one of the listed intents.",
                     "version": "1.0"},
            "environment": ENV_NAME,
            "dataset": {"id": "synth-nb-banking-intents", "name": self.dataset.name,
                        "splits": {k: len(v) for k, v in self.dataset.splits.items()}, "default_split": "train",
                        "intents": list(self.dataset.intents)},
            "rubric": {"outcome": "1.0 when the predicted intent equals the gold intent, else 0.0"},
            "inference": {"tool": TOOL_NAME, "tool_choice": "required"},
            "limits": {"max_turns": 1},
        }

    async def info(self, request: Request) -> dict[str, Any]:
        described = self.describe()
        return {"service": {"task": described["task"], "version": "1.0"}, "dataset": described["dataset"],
                "rubrics": {"outcome": described["rubric"]["outcome"], "events": None},
                "inference": described["inference"], "limits": described["limits"]}

    async def task_info(self, request: Request) -> Any:
        raw = request.query_params.getlist("seed") + request.query_params.getlist("seeds")
        split = request.query_params.get("split", "train")
        if split not in self.dataset.splits:
            raise TaskAppRefusal(422, f"unknown split {split!r}")
        if not raw:
            return {"taskset": self.describe()}
        try:
            seeds = [int(s) for s in raw]
        except ValueError:
            raise TaskAppRefusal(422, f"seed must be an integer, got {raw}") from None
        infos = [{**self.describe(), "task_metadata": {"seed": seed, "split": split,
                                                       "query": self.dataset.example(split, seed).query}}
                 for seed in seeds]
        return infos[0] if len(infos) == 1 else infos

    def _instance(self, body: dict[str, Any]) -> tuple[str, int, dict[str, Any], str]:
        """The rollout's split, seed, policy config and inference URL; 422 naming the first bad field."""
        for name in ("run_id", "env", "policy", "ops", "mode"):
            if name not in body:
                raise TaskAppRefusal(422, f"rollout request is missing '{name}'")
        env = as_table(body["env"])
        config = as_table(env.get("config"))
        split = str(config.get("split") or config.get("pool") or "train")
        if split not in self.dataset.splits:
            raise TaskAppRefusal(422, f"unknown split {split!r}; this task app has {sorted(self.dataset.splits)}")
        seed = env.get("seed", config.get("index", 0))
        if not isinstance(seed, int) or seed < 0:
            raise TaskAppRefusal(422, f"env.seed must be a non-negative integer, got {seed!r}")
        policy_config = as_table(as_table(body["policy"]).get("config"))
        inference_url = policy_config.get("inference_url")
        if not isinstance(inference_url, str) or not inference_url.startswith(("http://", "https://")):
            raise TaskAppRefusal(422, "policy.config.inference_url is required (an OpenAI-compatible base URL)")
        return split, seed, policy_config, inference_url

    async def rollout(self, body: dict[str, Any], policy: PolicyClient) -> dict[str, Any]:
        split, seed, policy_config, inference_url = self._instance(body)
        example = self.dataset.example(split, seed)
        request = policy_request(self.dataset, example.query, policy_config)
        messages = request["messages"]
        completion = await policy.complete(inference_url, request)
        return _response(body, example, split, seed, messages, completion,
                         _trace_id(policy_config, inference_url), inference_url)


def _response(body: dict[str, Any], example: Example, split: str, seed: int, messages: list[dict[str, str]],
              completion: dict[str, Any], trace_id: str | None, inference_url: str) -> dict[str, Any]:
    """The RolloutResponse: one single-step trajectory, scored 1.0 for the gold intent."""
    predicted, tool_calls = _predicted_intent(completion)
    correct = predicted == example.intent
    reward = 1.0 if correct else 0.0
    obs = {"query": example.query, "index": seed, "split": split}
    step = {"obs": obs, "tool_calls": tool_calls, "reward": reward, "done": True, "truncated": None,
            "info": {"expected_intent": example.intent, "predicted_intent": predicted, "correct": correct,
                     "messages": messages, "usage": completion.get("usage") or {},
                     "meta": {"inference_url": inference_url}}}
    policy = as_table(body.get("policy"))
    return {
        "run_id": body["run_id"],
        "trajectories": [{"env_id": f"{ENV_NAME}::{split}::{seed}", "policy_id": policy.get("policy_id") or "policy",
                          "steps": [step], "final": {"observation": obs, "reward": reward}, "length": 1,
                          "inference_url": inference_url, "decision_samples": None,
                          "trace_correlation_id": trace_id}],
        "branches": {},
        "metrics": {"episode_returns": [reward], "mean_return": reward, "num_steps": 1, "num_episodes": 1,
                    "outcome_score": reward, "events_score": reward, "details": {"correct": correct}},
        "aborted": False, "ops_executed": len(body["ops"]) if isinstance(body["ops"], list) else 2,
        "trace_correlation_id": trace_id, "trace": None,
        "pipeline_metadata": {"trace_correlation_id": trace_id, "inference_url": inference_url},
    }


def create_app(api_key: KeySource = None, dataset: BankingDataset | None = None, *,
               policy_api_key: str | None = None, local_policies: LocalPolicies | None = None) -> Starlette:
    """The task app; ``api_key`` None means "read ENVIRONMENT_API_KEY at request time".

    ``policy_api_key`` is sent to the policy as a bearer token; by default the policy gets no credentials.
    ``local_policies``: the policies this process serves itself, called without HTTP (``examples.contract``).
    """
    state = BankingTaskApp(dataset or load_dataset())
    return build_task_app(app_id=APP_ID, api_key=api_key, info=state.info, task_info=state.task_info,
                          rollout=state.rollout, policy_api_key=policy_api_key,
                          local_policies=local_policies)
