"""Driving the task app: concurrent ``POST /rollout`` calls over httpx, under a hard rollout budget.

One rollout = one task-app episode for one seed with one candidate (the candidate is identified by the
``inference_url`` the router handed out). The budget is reserved all-or-nothing per batch *before* any
call is made, so the number of rollouts never exceeds it, whatever the search engine would like to do.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["Rollout", "RolloutBudget", "SearchHalted", "TaskAppRunner", "parse_rollout"]


class SearchHalted(Exception):
    """Raised inside the search to unwind it: ``reason`` is ``budget_exhausted``, ``cancelled`` or ``timeout``.

    A control-flow signal, not an error (so not a ``LocalBackendError``): the executors catch it, keep the
    candidates scored so far and finish the job normally; it never reaches the runner or a client.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RolloutBudget:
    """Thread-safe rollout counter with an optional hard limit."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.reserved = 0
        self._lock = threading.Lock()

    def reserve(self, n: int) -> bool:
        with self._lock:
            if self.limit is not None and self.reserved + n > self.limit:
                return False
            self.reserved += n
            return True

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else self.limit - self.reserved


@dataclass
class Rollout:
    seed: int
    split: str
    score: float
    query: str = ""
    expected: str | None = None
    predicted: str | None = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def feedback(self) -> str:
        if self.error:
            return f"The rollout failed: {self.error}"
        if self.score >= 1.0:
            return f"Correct: the answer '{self.predicted}' is the expected intent."
        return f"Incorrect: answered '{self.predicted}', but the expected intent is '{self.expected}'."


def parse_rollout(payload: Any, seed: int, split: str) -> Rollout:
    """A task app's RolloutResponse as a scored ``Rollout`` (a malformed one scores 0 with the reason)."""
    if not isinstance(payload, dict):
        return Rollout(seed, split, 0.0, error="task app answered a non-object")
    metrics = payload.get("metrics") or {}
    score = metrics.get("outcome_score", metrics.get("mean_return"))
    trajectories = payload.get("trajectories") or [{}]
    steps = (trajectories[0] or {}).get("steps") or [{}]
    step = steps[0] or {}
    info, obs = step.get("info") or {}, step.get("obs") or {}
    return Rollout(seed, split, float(score) if isinstance(score, int | float) else 0.0,
                   query=str(obs.get("query", "")) if isinstance(obs, dict) else "",
                   expected=info.get("expected_intent"), predicted=info.get("predicted_intent"),
                   usage={k: int(v) for k, v in (info.get("usage") or {}).items() if isinstance(v, int)})


class TaskAppRunner:
    """Runs batches of rollouts concurrently (``max_concurrent``) and reports each one to ``on_rollout``."""

    def __init__(self, url: str, api_key: str | None, *, job_id: str, env_name: str, env_config: dict[str, Any],
                 policy_config: dict[str, Any], max_concurrent: int, budget: RolloutBudget,
                 cancelled: threading.Event, on_rollout: Callable[[Rollout], None] | None = None,
                 timeout: float = 120.0) -> None:
        self.url = url.rstrip("/")
        self.job_id = job_id
        self.env_name = env_name
        self.env_config = env_config
        self.policy_config = policy_config
        self.budget = budget
        self.cancelled = cancelled
        self.on_rollout = on_rollout
        #: rollouts finished: all of them, and those counted against the budget
        self.completed = 0
        self.budgeted_done = 0
        self.unbudgeted = 0
        self._lock = threading.Lock()
        headers = {"X-API-Key": api_key} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout, connect=10.0),
                                    limits=httpx.Limits(max_connections=max_concurrent + 4))
        self._pool = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix=f"rollouts-{job_id}")

    def check(self) -> dict[str, Any]:
        """``/health`` then ``/task_info`` (as ``synth-ai train`` does); returns the taskset descriptor."""
        try:
            health = self._client.get(f"{self.url}/health", timeout=10.0)
            info = self._client.get(f"{self.url}/task_info", timeout=10.0)
        except httpx.HTTPError as exc:
            raise RuntimeError(f"task app {self.url} is unreachable ({type(exc).__name__}); is it running?") from None
        if health.status_code in (400, 401, 403):
            raise RuntimeError(f"task app {self.url} rejected the API key (HTTP {health.status_code}); check "
                               "prompt_learning.task_app_api_key / ENVIRONMENT_API_KEY")
        if health.status_code != 200 or info.status_code != 200:
            raise RuntimeError(f"task app {self.url} is not healthy: /health {health.status_code}, "
                               f"/task_info {info.status_code}")
        body = info.json()
        return body.get("taskset", body) if isinstance(body, dict) else {}

    def _one(self, inference_url: str, seed: int, split: str, tag: str, budgeted: bool) -> Rollout:
        if self.cancelled.is_set():
            return Rollout(seed, split, 0.0, error="cancelled")
        cid = f"cid_{uuid.uuid4().hex[:12]}"
        request = {
            "run_id": f"{self.job_id}-{tag}-s{seed}", "mode": "eval", "ops": ["agent", "env"],
            "env": {"env_name": self.env_name, "seed": seed, "config": {**self.env_config, "split": split}},
            "policy": {"policy_name": self.policy_config.get("policy_name") or self.env_name,
                       "config": {**self.policy_config, "inference_url": f"{inference_url}?cid={cid}",
                                  "trace_correlation_id": cid}},
            "record": {"trajectories": True}, "on_done": "reset",
        }
        result = self.post_rollout(request, seed, split)
        with self._lock:
            self.completed += 1
            self.budgeted_done += budgeted
        if budgeted and self.on_rollout is not None:
            self.on_rollout(result)
        return result

    def post_rollout(self, request: dict[str, Any], seed: int, split: str) -> Rollout:
        """``POST /rollout``; a failed call is a rollout scored 0 with the error, never an exception."""
        try:
            response = self._client.post(f"{self.url}/rollout", json=request)
            if response.status_code != 200:
                return Rollout(seed, split, 0.0, error=f"HTTP {response.status_code}: {response.text[:300]}")
            return parse_rollout(response.json(), seed, split)
        except (httpx.HTTPError, ValueError) as exc:
            return Rollout(seed, split, 0.0, error=f"{type(exc).__name__}: {exc}")

    def run(self, inference_url: str, seeds: list[int], split: str, *, tag: str = "eval",
            budgeted: bool = True) -> list[Rollout]:
        """Score ``seeds``; raises ``SearchHalted`` when cancelled or when the batch would exceed the budget."""
        if self.cancelled.is_set():
            raise SearchHalted("cancelled")
        if budgeted and not self.budget.reserve(len(seeds)):
            raise SearchHalted("budget_exhausted")
        if not budgeted:
            self.unbudgeted += len(seeds)
        futures = [self._pool.submit(self._one, inference_url, seed, split, tag, budgeted) for seed in seeds]
        results = [f.result() for f in futures]
        if self.cancelled.is_set():
            raise SearchHalted("cancelled")
        return results

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()
