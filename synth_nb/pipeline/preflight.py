"""Check a job's task app, and (for the pre-flight card) its backend, from this machine before the job is created.

synth-ai 0.2.24 calls the task app's ``/health`` before a prompt-learning submission ("Task app
healthy"); RL's equivalent is a backend step (``/rl/verify_task_app``). A job whose task app is down,
or refuses the key, would otherwise be created and fail minutes later on the backend. The checks send
the resolved ``ENVIRONMENT_API_KEY`` the way task apps expect it (``X-API-Key``) and never print it.

A verdict on the backend needs a request to it: ``check_backend`` lists one job of the flow with the API
key (an authenticated read that creates nothing); without a key the backend is "not contacted", and a
failed request says what failed. Only the status is read of the answer, never its text.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from pydantic import SecretStr

from synth_nb.backend import display_url
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.pipeline import bundled_apps
from synth_nb.plan import Plan, TaskApp
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, SecretBundle

if TYPE_CHECKING:
    from synth_nb.pipeline.target import Target

__all__ = ["BackendCheck", "TaskAppCheck", "TaskAppUnhealthy", "check_backend", "check_task_app", "preflight",
           "require_healthy_task_apps", "skip_requested", "task_app_for", "task_app_info"]

TIMEOUT = 10.0
#: as the client's own requests: a loaded backend may be slow to list a job, and a wrong "not ready" costs more
BACKEND_TIMEOUT = 30.0


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
    #: round trip of ``/task_info`` (None when it was not asked or not offered)
    task_info_ms: float | None = None

    def line(self) -> str:
        if self.ok:
            return f"task app {self.url}: healthy ({self.latency_ms:.0f} ms)"
        return f"task app {self.url}: {self.problem}"

    def lines(self) -> list[str]:
        """The pre-flight card's task-app lines: ``/health`` and ``/task_info``, each with its latency."""
        if not self.ok:
            return [self.line()]
        info = (f"/task_info: answered ({self.task_info_ms:.0f} ms)" if self.task_info is not None
                else "/task_info: not offered by this task app")
        task = (self.task_info or {}).get("taskset", self.task_info or {})
        name = (task.get("task") or {}).get("name") if isinstance(task, dict) else None
        return [f"task app {self.url}: /health healthy ({self.latency_ms:.0f} ms)",
                f"task app {self.url}: {info}" + (f", task {name!r}" if name else "")]


@dataclass(frozen=True)
class BackendCheck:
    """What one authenticated read of the backend answered; ``contacted`` is False when none was sent."""

    url: str
    contacted: bool
    ok: bool
    latency_ms: float | None = None
    #: what failed, or why no request was sent; for an answer that could not check the key, what it was
    note: str | None = None

    def line(self) -> str:
        if not self.contacted:
            return f"backend check: not contacted ({self.note})"
        if self.ok:
            return f"backend check: {self.note} ({self.latency_ms:.0f} ms)"
        return f"backend check: {self.note}"

    @property
    def verdict(self) -> str:
        """How the card's verdict names the backend: ready, not ready, or not contacted."""
        return "backend not contacted" if not self.contacted else ("ready" if self.ok else "not ready")


def _refused(status: int, route: str) -> str:
    if status in (401, 403):
        return (f"the backend refused the API key (HTTP {status} to GET {route}): check {SYNTH_API_KEY} "
                "(.env, --env-file or the environment), or --backend")
    if status >= 500:
        return f"the backend failed (HTTP {status} to GET {route}); retry later or check its logs"
    return f"the backend answered HTTP {status} to GET {route}: is --backend the Synth API's base URL?"


def check_backend(target: Target, api_key: str | None, endpoints: FlowEndpoints, *,
                  timeout: float = BACKEND_TIMEOUT, transport: httpx.BaseTransport | None = None) -> BackendCheck:
    """``GET`` the flow's job list (one job) with the API key: the request a verdict on the backend needs.

    A backend without that list is asked its ``/health`` instead: it answered, but the key was not checked,
    and the line says so. Never raises for what the backend (or the network) does.
    """
    shown = display_url(target.url)
    if not target.started:
        return BackendCheck(shown, False, False, note="the embedded backend is not running")
    if not api_key:
        return BackendCheck(shown, False, False, note=f"no API key to sign a request with: set {SYNTH_API_KEY}")
    base, route = target.url.rstrip("/"), "/" + endpoints.create.lstrip("/")
    try:
        with httpx.Client(timeout=timeout, transport=transport, follow_redirects=False) as http:
            started = time.perf_counter()
            answer = http.get(f"{base}{route}", params={"limit": 1}, headers={"Authorization": f"Bearer {api_key}"})
            latency = (time.perf_counter() - started) * 1000
            if answer.status_code in (404, 405):
                health = http.get(f"{base}/health")
                if health.is_success:
                    return BackendCheck(shown, True, True, latency, note=(
                        f"the backend answered /health, but not GET {route} (HTTP {answer.status_code}): the API "
                        "key was not checked"))
    except httpx.HTTPError as exc:
        reason = f"no answer within {timeout:g} s" if isinstance(exc, httpx.TimeoutException) else type(exc).__name__
        return BackendCheck(shown, True, False, note=(
            f"the backend could not be reached ({reason} on GET {route}): is it running, and is --backend (or "
            "SYNTH_BACKEND_OVERRIDE) right? Offline, use --backend local"))
    if not answer.is_success:
        return BackendCheck(shown, True, False, latency, note=_refused(answer.status_code, route))
    return BackendCheck(shown, True, True, latency, note=f"GET {route} answered with the API key accepted")


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
            return TaskAppCheck(display_url(app.url), False, None, None,
                                f"cannot be reached ({reason}); is it running? start it, or fix "
                                "task_app_url / --task-url")
        latency = (time.perf_counter() - started) * 1000
        if health.status_code != 200:
            return TaskAppCheck(display_url(app.url), False, health.status_code, latency, _problem(health.status_code, app))
        info: dict[str, Any] | None = None
        info_ms: float | None = None
        try:
            started = time.perf_counter()
            answer = http.get(f"{base}/task_info", headers=headers)
            if answer.status_code == 200 and isinstance(answer.json(), dict):
                info, info_ms = answer.json(), (time.perf_counter() - started) * 1000
        except (httpx.HTTPError, ValueError):
            info = None
    return TaskAppCheck(display_url(app.url), True, 200, latency, task_info=info, task_info_ms=info_ms)


def require_healthy_task_apps(plans: Sequence[Plan], *, timeout: float = TIMEOUT,
                              transport: httpx.BaseTransport | None = None, hint: str = "") -> list[TaskAppCheck]:
    """Check every plan's task app once; ``TaskAppUnhealthy`` (one sentence per bad app, then ``hint``)
    if any fails."""
    checks: dict[str, TaskAppCheck] = {}
    for plan in plans:
        if plan.task_app is not None and plan.task_app.url not in checks:
            checks[plan.task_app.url] = check_task_app(plan.task_app, timeout=timeout, transport=transport)
    bad = [c for c in checks.values() if not c.ok]
    if bad:
        raise TaskAppUnhealthy("; ".join(c.line() for c in bad) + f". {hint + ' ' if hint else ''}Nothing was submitted.")
    return list(checks.values())


def skip_requested(bundles: Sequence[Any]) -> bool:
    """``SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1`` (environment or .env), as in synth-ai 0.2.24."""
    return any((b.setting("SYNTH_SKIP_TASK_APP_HEALTH_CHECK") or "").strip().lower() in ("1", "true", "yes")
               for b in bundles if b is not None)


def preflight(prepared: Sequence[Any], target: Target | None = None, *, timeout: float = TIMEOUT,
              transport: httpx.BaseTransport | None = None) -> list[TaskAppCheck]:
    """The checks every submission runs first (CLI and notebook alike), unless the user skipped them.

    ``prepared`` are ``pipeline.Prepared`` items with plans; raises ``TaskAppUnhealthy`` when a task app
    cannot be used, before anything is sent to the backend. On the embedded backend the error also says
    where it serves the bundled example task apps: the examples' ``task_app_url`` is for one run by hand.
    """
    if skip_requested([p.secrets for p in prepared]):
        return []
    hint = bundled_apps.hint(target) if target is not None and target.is_embedded and target.started else ""
    return require_healthy_task_apps([p.plan for p in prepared if p.plan is not None], timeout=timeout,
                                     transport=transport, hint=hint)


class PreparedJob(Protocol):
    """What ``task_app_for`` reads of a ``pipeline.Prepared`` (which imports this module)."""

    @property
    def plan(self) -> Plan | None: ...

    @property
    def secrets(self) -> SecretBundle | None: ...


def task_app_for(item: PreparedJob) -> TaskApp | None:
    """The task app a prepared job talks to: its plan's, else (RL, checked by the backend at submission)
    the one its flow reads from the plan, with the resolved ``ENVIRONMENT_API_KEY``."""
    plan = item.plan
    if plan is None:
        return None
    if plan.task_app is not None:
        return plan.task_app
    url = get_flow(plan.flow).workload(plan).task_url
    if not url:
        return None
    key = item.secrets.secret_value(ENVIRONMENT_API_KEY) if item.secrets is not None else None
    return TaskApp(url, SecretStr(key) if key else None)


def task_app_info(app: TaskApp, *, timeout: float = TIMEOUT,
                  transport: httpx.BaseTransport | None = None) -> dict[str, Any]:
    """What the task app says about itself: ``/info``, else ``/task_info``; ``problem`` when neither answers."""
    base = app.url.rstrip("/")
    try:
        with httpx.Client(timeout=timeout, transport=transport, follow_redirects=False) as http:
            for route in ("/info", "/task_info"):
                answer = http.get(f"{base}{route}", headers=_headers(app))
                if answer.status_code == 200:
                    return {"url": display_url(app.url), "route": route, "info": answer.json()}
    except (httpx.HTTPError, ValueError) as exc:
        return {"url": display_url(app.url), "problem": f"could not be asked ({type(exc).__name__})"}
    return {"url": display_url(app.url), "problem": f"answered HTTP {answer.status_code} to /info and /task_info"}
