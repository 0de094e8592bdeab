"""``POST /dry-rollout``: one rollout of a job that is not created, for the client's pre-flight card.

The body is ``{"kind", "body", "seed", "split"}``: ``body`` is the create-request body the job would be
sent with. The backend builds the policy that job would use, serves it on a temporary policy route and
asks the task app for one ``/rollout`` of ``seed`` exactly as the job's executor would; the answer is the
reward, the latency and the trace (the messages the policy received and what it replied). Nothing is
stored and no job exists afterwards. Prompt learning runs the job's own policy and prompt interceptor;
RL serves the untrained starting model (needs the ``train`` extra). A prompt-learning request may also ask
for one dry proposal (``"proposal": {"seeds": [...], "minibatch": m, "concurrency": n, "demos": d}``, see
``dry_proposal``): its answer is then under ``proposal``; with ``"rehearse": r`` (the job's rollouts) a
search of a few seconds at the dry pace is also run once in full, for no job (``dry_search``), under
``proposal.rehearsal``. An SFT or RL request may ask for a dry training run
(``"training": true``, with an SFT job's datasets as ``"files": {file id: text}``, see ``dry_training``): a
few of the job's real training steps, timed, under ``training``.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError, ExecutorInputError
from synth_nb.local.own_task_apps import job_task_url
from synth_nb.local.redact import scrub, secret_values
from synth_nb.local.runner import JobRunner
from synth_nb.local.server.dry_training import dry_files, dry_training
from synth_nb.local.server.http import json_body
from synth_nb.local.server.state import state_of

__all__ = ["routes"]

Trace = list[dict[str, Any]]


class _Recorded:
    """Wraps a policy handler so every call it answers is kept for the trace, with its latency."""

    def __init__(self, complete: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self._complete = complete
        self.calls: Trace = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        answer = self._complete(request)
        choices = answer.get("choices") or [{}]
        with self._lock:
            self.calls.append({"messages": request.get("messages") or [],
                               "response": (choices[0] or {}).get("message") or {},
                               "usage": answer.get("usage") or {},
                               "latency_ms": round((time.perf_counter() - started) * 1000, 1)})
        return answer


def _serve(runner: JobRunner, owner: str) -> Callable[[Callable[[dict[str, Any]], dict[str, Any]]], str]:
    def serve(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> str:
        return f"{runner.base_url}/v1/policies/{runner.policies.add(owner, handler)}"
    return serve


def _prompt_learning(runner: JobRunner, body: dict[str, Any], seed: int, split: str | None,
                     proposal: dict[str, Any] | None = None, default_executor: str | None = None) -> dict[str, Any]:
    """The job's policy behind the job's prompt interceptor, driven by the job's task-app runner."""
    from synth_nb.local.executors import prompt_learning_algorithm
    from synth_nb.local.executors.prompt_learning.rollouts import RolloutBudget, TaskAppRunner
    from synth_nb.local.executors.prompt_learning.router import CandidateRouter
    from synth_nb.local.executors.prompt_learning.settings import parse_prompt_settings
    from synth_nb.local.policies import build_policy
    from synth_nb.local.server import dry_proposal, dry_search

    settings = parse_prompt_settings(body, prompt_learning_algorithm(body) or "gepa")
    owner = f"dry_{secrets.token_hex(8)}"
    policy = build_policy(settings.policy)
    key = (settings.task_app_api_key or runner.task_app_key(settings.task_app_url)
           or os.environ.get("ENVIRONMENT_API_KEY"))
    recorded = _Recorded(policy.complete)
    try:
        router = CandidateRouter(_serve(runner, owner), _PolicyView(policy, recorded), settings.messages)
        tasks = TaskAppRunner(settings.task_app_url, key, job_id=owner, env_name=settings.env_name,
                              env_config=settings.env_config, policy_config=settings.policy_config,
                              max_concurrent=_concurrency(proposal), budget=RolloutBudget(None),
                              cancelled=threading.Event(), in_process=runner.task_app_in_process(settings.task_app_url))
        try:
            used_split = split or settings.train_split
            started = time.perf_counter()
            (rollout,) = tasks.run(router.url_for(settings.components), [seed], used_split, tag="dry",
                                   budgeted=False)
            latency = (time.perf_counter() - started) * 1000
            if proposal is not None:
                _await_warm_up()
            proposed = None if proposal is None else dry_proposal.propose(
                body, _serve(runner, owner), policy, tasks, proposal["seeds"], proposal["minibatch"], used_split,
                demos=proposal["demos"])
            if proposed is not None and proposal is not None and proposal["rehearse"] is not None:
                proposed["rehearsal"] = dry_search.rehearse(
                    runner, body, key, rollouts=proposal["rehearse"], pace=dry_proposal.warm_pace(proposed),
                    calls_out=_calls_out(settings.policy.kind, policy.model, proposed),
                    default_executor=default_executor)
        finally:
            tasks.close()
    finally:
        runner.policies.remove_job(owner)
        policy.close()
    return {"seed": seed, "split": used_split, "reward": None if rollout.error else rollout.score,
            "error": rollout.error, "latency_ms": round(latency, 1), "task_app_url": settings.task_app_url,
            "policy": {**settings.policy.describe(), "model": policy.model}, "trace": recorded.calls,
            "expected": rollout.expected, "predicted": rollout.predicted,
            **({"proposal": proposed} if proposed is not None else {})}


def _calls_out(policy_kind: str, policy_model: str, proposed: dict[str, Any]) -> str | None:
    """The model a run of the whole search would call beyond this process, or None when this process
    answers every rollout and writes every proposal itself (the offline and keyword policies, the offline
    proposer)."""
    if policy_kind not in ("offline", "keyword"):
        return f"its policy model {policy_model}"
    if proposed.get("proposer") != "offline":
        return f"its proposer model {proposed.get('proposer_model') or proposed.get('proposer')}"
    return None


def _await_warm_up(timeout: float = 120.0) -> None:
    """Wait for the policy's warm-up (``policies.warm_up``: encoding the bundled datasets' texts) when it is
    still running, as on a backend started for this check: a dry proposal timed beside it would time the
    warm-up's work too, which the job, started after the check, finds done."""
    from synth_nb.local.policies import WARM_UP_THREAD

    for thread in threading.enumerate():
        if thread.name == WARM_UP_THREAD:
            thread.join(timeout)


def _positive(value: Any, default: int) -> int:
    return min(value, 64) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _concurrency(proposal: dict[str, Any] | None) -> int:
    return _positive((proposal or {}).get("concurrency"), 1)


def _proposal(value: Any) -> dict[str, Any] | None:
    """The request's ``proposal``: None, or seeds (non-negative integers), the minibatch a proposal grounds
    itself on (default: all of them), the concurrency and ``rehearse``: the job's rollouts, when the client
    asks for the whole search to be run once if it takes a few seconds at the dry pace (``dry_search``)."""
    if value is None:
        return None
    seeds = value.get("seeds") if isinstance(value, dict) else None
    if not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ApiError(422, "proposal.seeds must be a non-empty list of non-negative integer seeds")
    demos, rehearse = value.get("demos"), value.get("rehearse")
    if rehearse is not None and (not isinstance(rehearse, int) or isinstance(rehearse, bool) or rehearse < 1):
        raise ApiError(422, "proposal.rehearse must be the job's rollouts (a positive integer)")
    return {"seeds": seeds, "minibatch": _positive(value.get("minibatch"), len(seeds)),
            "demos": min(demos, 16) if isinstance(demos, int) and not isinstance(demos, bool) and demos > 0 else 0,
            "concurrency": value.get("concurrency"), "rehearse": rehearse}


class _PolicyView:
    """A policy whose ``complete`` is recorded (what ``CandidateRouter`` calls)."""

    def __init__(self, policy: Any, complete: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.name, self.model, self.complete = policy.name, policy.model, complete

    def close(self) -> None:
        pass


def _rl(runner: JobRunner, body: dict[str, Any], seed: int) -> dict[str, Any]:
    """The job's starting model, sampled the way its first training step samples, for one seed."""
    try:
        from synth_nb.local.server import starting_policy
    except ImportError as exc:
        raise ApiError(501, "the RL dry rollout loads the starting model and needs the 'train' extra "
                            f"(pip install 'synth-nb[train]'): {exc}") from None
    owner = f"dry_{secrets.token_hex(8)}"
    policy = starting_policy.StartingPolicy(body, runner.task_app_key(job_task_url("rl", body)))
    recorded = _Recorded(policy.complete)
    try:
        started = time.perf_counter()
        reward, error = policy.rollout(_serve(runner, owner)(recorded), seed)
        latency = (time.perf_counter() - started) * 1000
    finally:
        runner.policies.remove_job(owner)
    return {"seed": seed, "split": None, "reward": reward, "error": error, "latency_ms": round(latency, 1),
            "task_app_url": policy.task_url, "policy": policy.describe(), "trace": recorded.calls}


async def dry_rollout(request: Request) -> Response:
    """Run one rollout for a job that is not created; 400 for a body its executor would refuse."""
    doc = await json_body(request)
    kind, body, seed, split = doc.get("kind"), doc.get("body"), doc.get("seed", 0), doc.get("split")
    if not isinstance(body, dict):
        raise ApiError(422, "body must be the job's create-request body (a JSON object)")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ApiError(422, f"seed must be a non-negative integer, got {seed!r}")
    if split is not None and not isinstance(split, str):
        raise ApiError(422, "split must be a string")
    runner = state_of(request).runner
    proposal = _proposal(doc.get("proposal"))
    training, files = doc.get("training") is True, dry_files(doc.get("files"))
    key = runner.task_app_key(job_task_url(kind, body)) if kind == "rl" else None
    if kind == "prompt_learning":
        default = state_of(request).default_executor
        work = lambda: _prompt_learning(runner, body, seed, split, proposal, default)  # noqa: E731
    elif kind == "rl":
        work = lambda: _rl(runner, body, seed)  # noqa: E731
    elif kind == "sft" and training:
        work = lambda: {"seed": None, "split": None, "reward": None, "trace": []}  # noqa: E731
    else:
        raise ApiError(422, f"dry rollouts exist for prompt_learning and rl jobs (and a dry training run for sft "
                            f"and rl jobs), not {kind!r}")
    try:
        answer = await run_in_threadpool(work)
        if training and kind in ("sft", "rl") and not answer.get("error"):
            answer["training"] = await run_in_threadpool(dry_training, runner, kind, body, files, key)
    except ExecutorInputError as exc:
        raise ApiError(400, str(exc)) from None
    sent = runner.task_app_key(job_task_url(kind, body))
    hidden = [*secret_values(body), *([sent] if sent else [])]
    return Response(scrub(json.dumps(answer, default=str), hidden), media_type="application/json")


routes = [Route("/dry-rollout", dry_rollout, methods=["POST"])]
