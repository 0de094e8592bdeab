"""Character-class task app: an RL example a tiny byte-level model can learn in minutes on two CPU cores.

Each seed asks for a reply written only in one character class (digits, vowels, capital letters or
punctuation), phrased in one of several ways. The reward is the share of the first ``REPLY_CHARS``
characters of the reply that belong to the class, so a random-init policy already earns a little
(about 0.05) and every extra right character raises it: a dense signal GRPO can climb, and one that
requires reading the prompt. Follows the Synth task-app contract (``/health``, ``/info``, ``/task_info``,
``/rollout``, ``/done``, ``X-API-Key``); the policy is called only through ``policy.config.inference_url``.
"""

from __future__ import annotations

import json
import os
import random
import string
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.examples.banking.app import normalize_inference_url

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


class _Refused(Exception):
    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status, self.detail = status, detail


def _keys(fixed: str | None) -> list[str]:
    keys = [fixed or os.environ.get("ENVIRONMENT_API_KEY", "")]
    keys += os.environ.get("ENVIRONMENT_API_KEY_ALIASES", "").split(",")
    return [k.strip() for k in keys if k and k.strip()]


def _check_auth(request: Request, fixed: str | None) -> None:
    allowed = _keys(fixed)
    if not allowed:
        raise _Refused(503, {"error": {"code": "missing_environment_api_key",
                                       "message": "ENVIRONMENT_API_KEY is not configured"}})
    offered = [request.headers.get("x-api-key", ""), *request.headers.get("x-api-keys", "").split(",")]
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        offered.append(auth[7:])
    if not any(k.strip() in allowed for k in offered if k.strip()):
        raise _Refused(400, {"error": {"code": "unauthorised", "message": "API key missing or invalid"}})


def _describe() -> dict[str, Any]:
    return {"task": {"id": APP_ID, "name": "Character classes", "version": "1.0",
                     "description": "Reply using only the character class the instruction names."},
            "environment": ENV_NAME,
            "dataset": {"id": APP_ID, "name": "charclass", "classes": list(CLASSES), "default_split": "train",
                        "splits": ["train", "test"], "instances": "unbounded (seed -> instance)"},
            "rubric": {"outcome": f"share of the first {REPLY_CHARS} reply characters in the requested class"},
            "inference": {"tool": None, "max_tokens": REPLY_CHARS + 4},
            "limits": {"max_turns": 1, "max_response_tokens": REPLY_CHARS + 4}}


async def _rollout(body: dict[str, Any], env_key: str, http: httpx.AsyncClient) -> dict[str, Any]:
    for field in ("run_id", "env", "policy", "ops", "mode"):
        if field not in body:
            raise _Refused(422, f"rollout request is missing '{field}'")
    env: dict[str, Any] = body["env"] if isinstance(body["env"], dict) else {}
    seed = env.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise _Refused(422, f"env.seed must be a non-negative integer, got {seed!r}")
    policy: dict[str, Any] = body["policy"] if isinstance(body["policy"], dict) else {}
    config: dict[str, Any] = policy["config"] if isinstance(policy.get("config"), dict) else {}
    url = config.get("inference_url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _Refused(422, "policy.config.inference_url is required (an OpenAI-compatible base URL)")
    env_config: dict[str, Any] = env["config"] if isinstance(env.get("config"), dict) else {}
    classes = env_config.get("classes")
    if classes is not None and (not isinstance(classes, list) or not classes
                                or any(c not in CLASSES for c in classes)):
        raise _Refused(422, f"env.config.classes must be a non-empty list drawn from {list(CLASSES)}")
    task = instance(seed, classes)
    messages = [{"role": "user", "content": task.prompt}]
    request = {"model": config.get("model") or "policy", "messages": messages,
               "temperature": config.get("temperature", 1.0),
               "max_tokens": config.get("max_tokens") or config.get("max_completion_tokens") or REPLY_CHARS + 4}
    try:
        response = await http.post(normalize_inference_url(url), json=request, headers={"X-API-Key": env_key})
    except httpx.HTTPError as exc:
        raise _Refused(502, f"policy call failed: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise _Refused(502, f"policy call failed: HTTP {response.status_code}: {response.text[:300]}")
    try:
        reply = str(response.json()["choices"][0]["message"].get("content") or "")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise _Refused(502, "the policy's reply is not an OpenAI chat completion") from None
    reward = score_reply(reply, task.class_name)
    trace_id = config.get("trace_correlation_id")
    obs = {"prompt": task.prompt, "class": task.class_name, "seed": seed}
    step = {"obs": obs, "tool_calls": [], "reward": reward, "done": True, "truncated": None,
            "info": {"reply": reply, "messages": messages, "meta": {"inference_url": url}}}
    return {"run_id": body["run_id"],
            "trajectories": [{"env_id": f"{ENV_NAME}::{seed}", "policy_id": policy.get("policy_id") or "policy",
                              "steps": [step], "final": {"observation": obs, "reward": reward}, "length": 1,
                              "inference_url": url, "decision_samples": None, "trace_correlation_id": trace_id}],
            "branches": {},
            "metrics": {"episode_returns": [reward], "mean_return": reward, "num_steps": 1, "num_episodes": 1,
                        "outcome_score": reward, "details": {"class": task.class_name, "reply": reply}},
            "aborted": False, "ops_executed": len(body["ops"]) if isinstance(body["ops"], list) else 2,
            "trace_correlation_id": trace_id, "trace": None,
            "pipeline_metadata": {"trace_correlation_id": trace_id, "inference_url": url}}


def create_app(api_key: str | None = None) -> Starlette:
    """The task app; ``api_key`` None means "read ENVIRONMENT_API_KEY at request time"."""
    http = httpx.AsyncClient(timeout=httpx.Timeout(120.0, connect=10.0), limits=httpx.Limits(max_connections=64))

    def guarded(handler: Any, *, auth: bool = True) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                if auth:
                    _check_auth(request, api_key)
                return JSONResponse(await handler(request))
            except _Refused as exc:
                return JSONResponse({"detail": exc.detail}, status_code=exc.status)
        return endpoint

    async def root(request: Request) -> Any:
        return {"status": "ok", "service": APP_ID}

    async def health(request: Request) -> Any:
        return {"healthy": True, "auth": {"required": True, "expected_prefix": (_keys(api_key) or [""])[0][:6] + "..."}}

    async def info(request: Request) -> Any:
        described = _describe()
        return {"service": {"task": described["task"], "version": "1.0"}, "dataset": described["dataset"],
                "rubrics": {"outcome": described["rubric"]["outcome"], "events": None},
                "inference": described["inference"], "limits": described["limits"]}

    async def task_info(request: Request) -> Any:
        raw = request.query_params.getlist("seed") + request.query_params.getlist("seeds")
        if not raw:
            return {"taskset": _describe()}
        try:
            seeds = [int(s) for s in raw]
        except ValueError:
            raise _Refused(422, f"seed must be an integer, got {raw}") from None
        infos = [{**_describe(), "task_metadata": {"seed": s, "prompt": instance(s).prompt,
                                                   "class": instance(s).class_name}} for s in seeds]
        return infos[0] if len(infos) == 1 else infos

    async def rollout(request: Request) -> Any:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Refused(400, "request body must be JSON") from None
        if not isinstance(body, dict):
            raise _Refused(422, "rollout request must be a JSON object")
        return await _rollout(body, request.headers.get("x-api-key") or (_keys(api_key) or [""])[0], http)

    async def done(request: Request) -> Any:
        return {"ok": True, "service": APP_ID}

    return Starlette(routes=[
        Route("/", guarded(root, auth=False), methods=["GET", "HEAD"]),
        Route("/health", guarded(health), methods=["GET"]),
        Route("/info", guarded(info), methods=["GET"]),
        Route("/task_info", guarded(task_info), methods=["GET"]),
        Route("/rollout", guarded(rollout), methods=["POST"]),
        Route("/done", guarded(done), methods=["POST"]),
    ])
