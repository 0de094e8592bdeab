"""The banking intent task app: a Starlette app that follows the Synth task-app contract.

Routes: ``GET /`` (open), ``GET /health``, ``GET /info``, ``GET /task_info``, ``POST /rollout``,
``POST /done`` (all behind ``X-API-Key`` / ``X-API-Keys`` / ``Authorization: Bearer`` = ENVIRONMENT_API_KEY).
A rollout renders its own baseline messages for the seed, calls the policy at
``policy.config.inference_url`` as an OpenAI-compatible chat completion (tool call required) and scores
the reply 1.0 for the gold intent, else 0.0 — the same data path a hosted optimiser drives.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.examples.banking.dataset import TOOL_NAME, BankingDataset, load_dataset

__all__ = ["APP_ID", "create_app", "normalize_inference_url"]

APP_ID = "synth-nb-banking"
ENV_NAME = "banking"
_POLICY_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class _BadRequest(Exception):
    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


def normalize_inference_url(url: str) -> str:
    """Task-app rule: keep ``…/chat/completions``; ``…/v1`` or ``…/v1/<id>`` gain ``/chat/completions``."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = f"{path}/chat/completions" if (path.endswith("/v1") or "/v1/" in path) else f"{path}/v1/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def as_table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tool_schema(intents: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": TOOL_NAME, "description": "Return the single intent label of the customer query.",
        "parameters": {"type": "object", "properties": {"intent": {"type": "string", "enum": list(intents)}},
                       "required": ["intent"]}}}


def _allowed_keys(fixed: str | None) -> list[str]:
    keys = [fixed] if fixed else [os.environ.get("ENVIRONMENT_API_KEY", "")]
    keys += [k.strip() for k in os.environ.get("ENVIRONMENT_API_KEY_ALIASES", "").split(",")]
    return [k for k in keys if k]


def _check_auth(request: Request, fixed_key: str | None) -> None:
    allowed = _allowed_keys(fixed_key)
    if not allowed:
        raise _BadRequest(503, {"error": {"code": "missing_environment_api_key",
                                          "message": "ENVIRONMENT_API_KEY is not configured"}})
    offered = [request.headers.get("x-api-key", "")]
    offered += request.headers.get("x-api-keys", "").split(",")
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        offered.append(auth[7:])
    if not any(k.strip() in allowed for k in offered if k.strip()):
        raise _BadRequest(400, {"error": {"code": "unauthorised", "message": "API key missing or invalid"}})


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
    """Route handlers over one dataset; one shared async HTTP client for policy calls."""

    def __init__(self, dataset: BankingDataset, api_key: str | None) -> None:
        self.dataset = dataset
        self.api_key = api_key
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=_POLICY_TIMEOUT, limits=httpx.Limits(max_connections=64))
        return self._client

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

    def task_info(self, seed: int, split: str) -> dict[str, Any]:
        example = self.dataset.example(split, seed)
        info = self.describe()
        info["task_metadata"] = {"seed": seed, "split": split, "query": example.query}
        return info

    async def rollout(self, body: dict[str, Any], env_key: str) -> dict[str, Any]:
        for field in ("run_id", "env", "policy", "ops", "mode"):
            if field not in body:
                raise _BadRequest(422, f"rollout request is missing '{field}'")
        env = as_table(body["env"])
        config = as_table(env.get("config"))
        split = str(config.get("split") or config.get("pool") or "train")
        if split not in self.dataset.splits:
            raise _BadRequest(422, f"unknown split {split!r}; this task app has {sorted(self.dataset.splits)}")
        seed = env.get("seed", config.get("index", 0))
        if not isinstance(seed, int) or seed < 0:
            raise _BadRequest(422, f"env.seed must be a non-negative integer, got {seed!r}")
        policy = as_table(body["policy"])
        policy_config = as_table(policy.get("config"))
        inference_url = policy_config.get("inference_url")
        if not isinstance(inference_url, str) or not inference_url.startswith(("http://", "https://")):
            raise _BadRequest(422, "policy.config.inference_url is required (an OpenAI-compatible base URL)")

        example = self.dataset.example(split, seed)
        messages = self.dataset.render_messages(example.query)
        request = {"model": policy_config.get("model") or "policy", "messages": messages,
                   "temperature": policy_config.get("temperature", 0.0),
                   "max_tokens": policy_config.get("max_completion_tokens") or policy_config.get("max_tokens") or 64,
                   "tools": [_tool_schema(self.dataset.intents)], "tool_choice": "required"}
        try:
            response = await self._http().post(normalize_inference_url(inference_url), json=request,
                                               headers={"X-API-Key": env_key})
        except httpx.HTTPError as exc:
            raise _BadRequest(502, f"policy call failed: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise _BadRequest(502, f"policy call failed: HTTP {response.status_code}: {response.text[:300]}")
        completion = response.json()
        predicted, tool_calls = _predicted_intent(completion)
        correct = predicted == example.intent
        reward = 1.0 if correct else 0.0
        trace_id = _trace_id(policy_config, inference_url)
        obs = {"query": example.query, "index": seed, "split": split}
        step = {"obs": obs, "tool_calls": tool_calls, "reward": reward, "done": True, "truncated": None,
                "info": {"expected_intent": example.intent, "predicted_intent": predicted, "correct": correct,
                         "messages": messages, "usage": completion.get("usage") or {},
                         "meta": {"inference_url": inference_url}}}
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

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def create_app(api_key: str | None = None, dataset: BankingDataset | None = None) -> Starlette:
    """The task app; ``api_key`` None means "read ENVIRONMENT_API_KEY at request time"."""
    state = BankingTaskApp(dataset or load_dataset(), api_key)

    def guarded(handler: Any, *, auth: bool = True) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                if auth:
                    _check_auth(request, state.api_key)
                return JSONResponse(await handler(request))
            except _BadRequest as exc:
                return JSONResponse({"detail": exc.detail}, status_code=exc.status)
        return endpoint

    async def root(request: Request) -> dict[str, Any]:
        return {"status": "ok", "service": APP_ID}

    async def health(request: Request) -> dict[str, Any]:
        key = (_allowed_keys(state.api_key) or [""])[0]
        return {"healthy": True, "auth": {"required": True, "expected_prefix": key[:6] + "..."}}

    async def info(request: Request) -> dict[str, Any]:
        described = state.describe()
        return {"service": {"task": described["task"], "version": "1.0"}, "dataset": described["dataset"],
                "rubrics": {"outcome": described["rubric"]["outcome"], "events": None},
                "inference": described["inference"], "limits": described["limits"]}

    async def task_info(request: Request) -> Any:
        raw = request.query_params.getlist("seed") + request.query_params.getlist("seeds")
        split = request.query_params.get("split", "train")
        if split not in state.dataset.splits:
            raise _BadRequest(422, f"unknown split {split!r}")
        if not raw:
            return {"taskset": state.describe()}
        try:
            seeds = [int(s) for s in raw]
        except ValueError:
            raise _BadRequest(422, f"seed must be an integer, got {raw}") from None
        infos = [state.task_info(seed, split) for seed in seeds]
        return infos[0] if len(infos) == 1 else infos

    async def rollout(request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _BadRequest(400, "request body must be JSON") from None
        if not isinstance(body, dict):
            raise _BadRequest(422, "rollout request must be a JSON object")
        env_key = request.headers.get("x-api-key") or (_allowed_keys(state.api_key) or [""])[0]
        return await state.rollout(body, env_key)

    async def done(request: Request) -> dict[str, Any]:
        return {"ok": True, "service": APP_ID}

    routes = [
        Route("/", guarded(root, auth=False), methods=["GET", "HEAD"]),
        Route("/health", guarded(health), methods=["GET"]),
        Route("/info", guarded(info), methods=["GET"]),
        Route("/task_info", guarded(task_info), methods=["GET"]),
        Route("/rollout", guarded(rollout), methods=["POST"]),
        Route("/done", guarded(done), methods=["POST"]),
    ]
    return Starlette(routes=routes)
