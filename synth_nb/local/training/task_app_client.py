"""Talking to a task app from the RL executor (health check) and its worker (rollouts); torch-free.

Every failure becomes a ``TaskAppError`` whose message says what the task app did wrong, so a job against
a task app that is down or answers garbage fails with a clear event instead of a stack trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import httpx

from synth_nb.local.errors import TaskAppError, answer_detail, json_answer
from synth_nb.local.urls import endpoint

__all__ = ["RolloutOutcome", "check_task_app", "rollout_outcome", "rollout_reward", "task_app_headers"]

#: the most reward components kept per rollout (a task app may send any number)
MAX_COMPONENTS = 16


@dataclass(frozen=True)
class RolloutOutcome:
    """What one ``POST /rollout`` answered: its reward, and its parts when the task app names them."""

    reward: float
    #: ``metrics.reward_components`` (or ``outcome_components``): name -> number, at most MAX_COMPONENTS
    components: dict[str, float] = field(default_factory=dict)


def task_app_headers(api_key: str | None) -> dict[str, str]:
    if not api_key:
        return {}
    return {"X-API-Key": api_key, "X-API-Keys": api_key, "Authorization": f"Bearer {api_key}"}


def check_task_app(url: str, api_key: str | None, *, timeout: float = 10.0) -> dict[str, Any]:
    """GET /health and /task_info like the 0.2.24 CLI; returns the task_info document."""
    headers = task_app_headers(api_key)
    try:
        with httpx.Client(timeout=timeout) as client:
            health = client.get(endpoint(url, "/health"), headers=headers)
            if health.status_code != 200:
                raise TaskAppError(f"task app {url} /health answered HTTP {health.status_code}: "
                                   f"{answer_detail(health)}"
                                   + (" (check ENVIRONMENT_API_KEY)" if health.status_code in (400, 401, 403) else ""))
            info = client.get(endpoint(url, "/task_info"), headers=headers)
    except httpx.HTTPError as exc:
        raise TaskAppError(f"task app {url} is not reachable ({type(exc).__name__}: {exc}); start it or fix "
                           "services.task_url") from None
    doc = json_answer(info, f"task app {url} /task_info", TaskAppError)
    return doc if isinstance(doc, dict) else {"taskset": doc}


@lru_cache(maxsize=64)
def _rollout_url(url: str) -> httpx.URL:
    """Parsed once per task app: httpx re-parses and re-quotes a str URL on every request."""
    return httpx.URL(endpoint(url, "/rollout"))


def _components(metrics: dict[str, Any]) -> dict[str, float]:
    """The numeric reward parts a task app reports (``metrics.reward_components``, else
    ``metrics.outcome_components``); anything else in them is left out."""
    for key in ("reward_components", "outcome_components"):
        table = metrics.get(key)
        if isinstance(table, dict):
            return {str(name)[:64]: float(value) for name, value in list(table.items())[:MAX_COMPONENTS]
                    if isinstance(value, int | float) and not isinstance(value, bool)}
    return {}


def rollout_outcome(client: httpx.Client, url: str, payload: dict[str, Any], api_key: str | None
                    ) -> RolloutOutcome:
    """POST /rollout: its reward (``metrics.outcome_score``, else ``metrics.mean_return``) and its parts."""
    try:
        response = client.post(_rollout_url(url), json=payload, headers=task_app_headers(api_key))
    except httpx.HTTPError as exc:
        raise TaskAppError(f"POST {url}/rollout failed: {type(exc).__name__}: {exc}") from None
    body = json_answer(response, f"POST {url}/rollout", TaskAppError)
    metrics = body.get("metrics") if isinstance(body, dict) else None
    if not isinstance(metrics, dict):
        raise TaskAppError(f"POST {url}/rollout answered without a metrics object (not a RolloutResponse)")
    for key in ("outcome_score", "mean_return", "outcome_reward"):
        value = metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return RolloutOutcome(float(value), _components(metrics))
    raise TaskAppError(f"POST {url}/rollout answered without a numeric metrics.outcome_score or "
                       "metrics.mean_return")


def rollout_reward(client: httpx.Client, url: str, payload: dict[str, Any], api_key: str | None) -> float:
    """POST /rollout and return its reward alone (``rollout_outcome``)."""
    return rollout_outcome(client, url, payload, api_key).reward
