"""Driving the task app: concurrent ``POST /rollout`` calls, under a hard rollout budget.

One rollout = one task-app episode for one seed with one candidate (the candidate is identified by the
``inference_url`` the router handed out). The budget is reserved all-or-nothing per batch *before* any
call is made, so the number of rollouts never exceeds it, whatever the search engine would like to do.

The calls run as tasks on one event loop per job over a keep-alive aiohttp session, not on a pool of
threads with httpx: a rollout is one small request, and the per-request CPU of httpx (several times
aiohttp's) and sixteen threads contending for the GIL were most of the local rollout path's cost.
Bodies are encoded and parsed with msgspec, a fraction of ``json``'s CPU.

A task app the backend serves itself (``in_process``, see ``examples.mounted``) is handed the same request
bytes in this process and answers with the same status and bytes as over HTTP: one rollout then costs no
socket, HTTP parsing or server middleware, and the key and size checks are the task app's own, unchanged.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp
import msgspec

from synth_nb.local.urls import endpoint

__all__ = ["MAX_ANSWER_BYTES", "Rollout", "RolloutBudget", "SearchHalted", "TaskAppRunner", "new_event_loop", "parse_rollout"]

T = TypeVar("T")
_JSON = {"Content-Type": "application/json"}
#: a task app's answer to one rollout (a few kilobytes for the examples); a larger one scores 0, unread
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: ``/rollout`` of a task app in this process: (keys offered, request body) -> (HTTP status, JSON answer)
InProcessRollout = Callable[[Sequence[str], bytes], Awaitable[tuple[int, bytes]]]


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


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed (the ``local`` extra brings it), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class _AnswerTooLarge(Exception):
    def __init__(self) -> None:
        super().__init__(f"the task app's answer is larger than the {MAX_ANSWER_BYTES}-byte limit")


async def _read_answer(response: aiohttp.ClientResponse) -> bytes:
    """The answer's body, refused past ``MAX_ANSWER_BYTES`` (declared, or as it streams in)."""
    declared = response.content_length
    if declared is not None:
        if declared > MAX_ANSWER_BYTES:
            raise _AnswerTooLarge
        return await response.read()
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise _AnswerTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _failure(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, _AnswerTooLarge):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class TaskAppRunner:
    """Runs batches of rollouts concurrently (``max_concurrent``) and reports each one to ``on_rollout``.

    Thread-safe: ``run`` may be called from any thread; the calls themselves run on the runner's loop.
    ``in_process`` (when the backend serves the task app itself) carries ``/rollout`` instead of HTTP.
    """

    def __init__(self, url: str, api_key: str | None, *, job_id: str, env_name: str, env_config: dict[str, Any],
                 policy_config: dict[str, Any], max_concurrent: int, budget: RolloutBudget,
                 cancelled: threading.Event, on_rollout: Callable[[Rollout], None] | None = None,
                 timeout: float = 120.0, in_process: InProcessRollout | None = None) -> None:
        self.url = url.rstrip("/")
        self.in_process = in_process
        #: the keys the HTTP session's ``X-API-Key`` header offers, offered the same way in-process
        self._offered = [api_key] if api_key else []
        self.job_id = job_id
        self.env_name = env_name
        self.env_config = env_config
        self.policy_config = policy_config
        self.budget = budget
        self.cancelled = cancelled
        self.on_rollout = on_rollout
        self.timeout = timeout
        #: rollouts finished: all of them, and those counted against the budget
        self.completed = 0
        self.budgeted_done = 0
        self.unbudgeted = 0
        self._lock = threading.Lock()
        self._loop = new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"rollouts-{job_id}", daemon=True)
        self._thread.start()
        self._session, self._slots = self._call(self._open(api_key, max_concurrent))

    async def _open(self, api_key: str | None, max_concurrent: int) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        headers = {"X-API-Key": api_key} if api_key else {}
        session = aiohttp.ClientSession(
            headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout, connect=10.0),
            connector=aiohttp.TCPConnector(limit=max_concurrent + 4))
        return session, asyncio.Semaphore(max_concurrent)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def _get(self, path: str) -> tuple[int, bytes]:
        async with self._session.get(endpoint(self.url, path), timeout=aiohttp.ClientTimeout(total=10.0)) as response:
            return response.status, await response.read()

    def check(self) -> dict[str, Any]:
        """``/health`` then ``/task_info`` (as ``synth-ai train`` does); returns the taskset descriptor."""
        try:
            health, _ = self._call(self._get("/health"))
            info, raw = self._call(self._get("/task_info"))
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise RuntimeError(f"task app {self.url} is unreachable ({type(exc).__name__}); is it running?") from None
        if health in (400, 401, 403):
            raise RuntimeError(f"task app {self.url} rejected the API key (HTTP {health}); check "
                               "prompt_learning.task_app_api_key / ENVIRONMENT_API_KEY")
        if health != 200 or info != 200:
            raise RuntimeError(f"task app {self.url} is not healthy: /health {health}, /task_info {info}")
        try:
            body = json.loads(raw)
        except ValueError:
            raise RuntimeError(f"task app {self.url} answered /task_info with something that is not JSON") from None
        return body.get("taskset", body) if isinstance(body, dict) else {}

    def rollout_request(self, inference_url: str, seed: int, split: str, tag: str) -> dict[str, Any]:
        """The ``POST /rollout`` body for one seed; the policy URL carries a fresh correlation id."""
        cid = f"cid_{random.getrandbits(48):012x}"  # not uuid4: os.urandom drops the GIL per rollout
        return {
            "run_id": f"{self.job_id}-{tag}-s{seed}", "mode": "eval", "ops": ["agent", "env"],
            "env": {"env_name": self.env_name, "seed": seed, "config": {**self.env_config, "split": split}},
            "policy": {"policy_name": self.policy_config.get("policy_name") or self.env_name,
                       "config": {**self.policy_config, "inference_url": f"{inference_url}?cid={cid}",
                                  "trace_correlation_id": cid}},
            "record": {"trajectories": True}, "on_done": "reset",
        }

    async def post_rollout(self, request: dict[str, Any], seed: int, split: str) -> Rollout:
        """``POST /rollout``; a failed call is a rollout scored 0 with the error, never an exception."""
        try:
            data = msgspec.json.encode(request)
            if self.in_process is not None:
                async with asyncio.timeout(self.timeout):
                    status, raw = await self.in_process(self._offered, data)
                if len(raw) > MAX_ANSWER_BYTES:
                    raise _AnswerTooLarge
            else:
                async with self._session.post(endpoint(self.url, "/rollout"), data=data, headers=_JSON) as response:
                    status, raw = response.status, await _read_answer(response)
            if status != 200:
                return Rollout(seed, split, 0.0, error=f"HTTP {status}: {raw.decode('utf-8', 'replace')[:300]}")
            return parse_rollout(msgspec.json.decode(raw), seed, split)
        except (aiohttp.ClientError, TimeoutError, ValueError, msgspec.DecodeError, _AnswerTooLarge) as exc:
            return Rollout(seed, split, 0.0, error=_failure(exc, self.timeout))

    async def _one(self, inference_url: str, seed: int, split: str, tag: str, budgeted: bool) -> Rollout:
        async with self._slots:
            if self.cancelled.is_set():
                return Rollout(seed, split, 0.0, error="cancelled")
            result = await self.post_rollout(self.rollout_request(inference_url, seed, split, tag), seed, split)
        with self._lock:
            self.completed += 1
            self.budgeted_done += budgeted
        if budgeted and self.on_rollout is not None:
            self.on_rollout(result)
        return result

    async def _batch(self, inference_url: str, seeds: list[int], split: str, tag: str,
                     budgeted: bool) -> list[Rollout]:
        return list(await asyncio.gather(*(self._one(inference_url, seed, split, tag, budgeted) for seed in seeds)))

    def run(self, inference_url: str, seeds: list[int], split: str, *, tag: str = "eval",
            budgeted: bool = True) -> list[Rollout]:
        """Score ``seeds``; raises ``SearchHalted`` when cancelled or when the batch would exceed the budget."""
        if self.cancelled.is_set():
            raise SearchHalted("cancelled")
        if budgeted and not self.budget.reserve(len(seeds)):
            raise SearchHalted("budget_exhausted")
        if not budgeted:
            with self._lock:
                self.unbudgeted += len(seeds)
        results = self._call(self._batch(inference_url, seeds, split, tag, budgeted))
        if self.cancelled.is_set():
            raise SearchHalted("cancelled")
        return results

    def close(self) -> None:
        """Close the session and stop the loop (idempotent)."""
        if self._loop.is_closed():
            return
        try:
            self._call(self._session.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10.0)
            if not self._loop.is_running():
                self._loop.close()
