"""Check a job's task app from this machine before the job is created.

synth-ai 0.2.24 calls the task app's ``/health`` before a prompt-learning submission ("Task app
healthy"); RL's equivalent is a backend step (``/rl/verify_task_app``). A job whose task app is down,
or refuses the key, would otherwise be created and fail minutes later on the backend. The checks send
the resolved ``ENVIRONMENT_API_KEY`` the way task apps expect it (``X-API-Key``) and never print it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from synth_nb.errors import ConfigError
from synth_nb.plan import Plan, TaskApp

__all__ = ["TaskAppCheck", "TaskAppUnhealthy", "check_task_app", "preflight", "require_healthy_task_apps",
           "skip_requested"]

TIMEOUT = 10.0


class TaskAppUnhealthy(ConfigError):
    """The task app a config names cannot be used: nothing was sent to the backend (exit 2)."""


@dataclass(frozen=True)
class TaskAppCheck:
    """What ``/health`` (and ``/task_info`` when offered) answered, with the round-trip time."""

    url: str
    ok: bool
    status: int | None
    latency_ms: float | None
    problem: str | None = None
    task_info: dict[str, Any] | None = None

    def line(self) -> str:
        if self.ok:
            return f"task app {self.url}: healthy ({self.latency_ms:.0f} ms)"
        return f"task app {self.url}: {self.problem}"


def _headers(app: TaskApp) -> dict[str, str]:
    key = app.api_key.get_secret_value() if app.api_key is not None else ""
    return {"X-API-Key": key} if key else {}


def _problem(status: int, app: TaskApp) -> str:
    if status in (400, 401, 403):
        which = "no ENVIRONMENT_API_KEY was sent" if app.api_key is None else "it refused the ENVIRONMENT_API_KEY"
        return (f"answered HTTP {status} to /health: {which}; put the task app's key in ENVIRONMENT_API_KEY "
                "(.env, --env-file or the environment)")
    if status == 503:
        return "answered HTTP 503 to /health: the task app has no ENVIRONMENT_API_KEY configured; start it with one"
    return f"answered HTTP {status} to /health; check the task app's logs"


def check_task_app(app: TaskApp, *, timeout: float = TIMEOUT,
                   transport: httpx.BaseTransport | None = None) -> TaskAppCheck:
    """GET ``/health`` then ``/task_info`` (a 404 there is fine: not every task app offers it)."""
    base = app.url.rstrip("/")
    headers = _headers(app)
    with httpx.Client(timeout=timeout, transport=transport, follow_redirects=False) as http:
        started = time.perf_counter()
        try:
            health = http.get(f"{base}/health", headers=headers)
        except httpx.HTTPError as exc:
            reason = type(exc).__name__.replace("Error", " error").lower()
            return TaskAppCheck(app.url, False, None, None,
                                f"cannot be reached ({reason}); is it running? start it, or fix "
                                "task_app_url / --task-url")
        latency = (time.perf_counter() - started) * 1000
        if health.status_code != 200:
            return TaskAppCheck(app.url, False, health.status_code, latency, _problem(health.status_code, app))
        info: dict[str, Any] | None = None
        try:
            answer = http.get(f"{base}/task_info", headers=headers)
            if answer.status_code == 200 and isinstance(answer.json(), dict):
                info = answer.json()
        except (httpx.HTTPError, ValueError):
            info = None
    return TaskAppCheck(app.url, True, 200, latency, task_info=info)


def require_healthy_task_apps(plans: Sequence[Plan], *, timeout: float = TIMEOUT,
                              transport: httpx.BaseTransport | None = None) -> list[TaskAppCheck]:
    """Check every plan's task app once; ``TaskAppUnhealthy`` (one sentence per bad app) if any fails."""
    checks: dict[str, TaskAppCheck] = {}
    for plan in plans:
        if plan.task_app is not None and plan.task_app.url not in checks:
            checks[plan.task_app.url] = check_task_app(plan.task_app, timeout=timeout, transport=transport)
    bad = [c for c in checks.values() if not c.ok]
    if bad:
        raise TaskAppUnhealthy("; ".join(c.line() for c in bad) + ". Nothing was submitted.")
    return list(checks.values())


def skip_requested(bundles: Sequence[Any]) -> bool:
    """``SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1`` (environment or .env), as in synth-ai 0.2.24."""
    return any((b.setting("SYNTH_SKIP_TASK_APP_HEALTH_CHECK") or "").strip().lower() in ("1", "true", "yes")
               for b in bundles if b is not None)


def preflight(prepared: Sequence[Any], *, timeout: float = TIMEOUT,
              transport: httpx.BaseTransport | None = None) -> list[TaskAppCheck]:
    """The checks every submission runs first (CLI and notebook alike), unless the user skipped them.

    ``prepared`` are ``pipeline.Prepared`` items with plans; raises ``TaskAppUnhealthy`` when a task app
    cannot be used, before anything is sent to the backend.
    """
    if skip_requested([p.secrets for p in prepared]):
        return []
    return require_healthy_task_apps([p.plan for p in prepared if p.plan is not None], timeout=timeout,
                                     transport=transport)
