"""What both prompt-learning executors set up around a search: proposer, policy, interceptor, task app.

``PromptRuntime`` is a context manager so the policy (maybe a loaded torch model), the HTTP pools and the
proposer client are released however the search ends.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.proposers import Proposer
from synth_nb.local.executors.prompt_learning.report import Reporter
from synth_nb.local.executors.prompt_learning.rollouts import RolloutBudget, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter
from synth_nb.local.executors.prompt_learning.settings import PromptSettings, ProposerSpec, as_table
from synth_nb.local.policies import Policy, PolicySpec, build_policy

__all__ = ["PromptRuntime", "choose_proposer", "seed_split"]

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def seed_split(taskset: dict[str, Any], default: str) -> str:
    """The held-out split: ``test`` when the task app declares one, else ``default``."""
    splits = (taskset.get("dataset") or {}).get("splits") if isinstance(taskset, dict) else None
    return "test" if isinstance(splits, dict | list) and "test" in splits else default


def choose_proposer(spec: ProposerSpec) -> tuple[ProposerSpec, str]:
    """The proposer to use and why: the configured model when reachable with a key, else offline."""
    if spec.offline:
        return spec, "no proposer model URL configured; using the offline deterministic proposer"
    key = PolicySpec("upstream", provider=spec.provider, api_key_env=spec.api_key_env).resolve_key()
    if key or urlsplit(spec.url or "").hostname in _LOOPBACK:
        return spec, f"configured proposer model {spec.model!r} at {spec.url}"
    wanted = spec.api_key_env or f"the {spec.provider or 'provider'} API key variable"
    return ProposerSpec(metaprompt=spec.metaprompt), (
        f"no API key for proposer model {spec.model!r} (set {wanted}); using the offline deterministic proposer")


class PromptRuntime:
    def __init__(self, ctx: JobContext, settings: PromptSettings, *, budget: int | None, max_concurrent: int) -> None:
        self.ctx = ctx
        self.settings = settings
        self.budget = budget
        self.max_concurrent = max_concurrent
        self._warned: set[str] = set()
        self.policy: Policy | None = None
        self.taskset: dict[str, Any] = {}

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.ctx.emit("prompt.learning.proposer.fallback", message, {"proposer": "offline"}, level="warning")

    def __enter__(self) -> PromptRuntime:
        ctx, s = self.ctx, self.settings
        spec, why = choose_proposer(s.proposer)
        self.proposer = Proposer(spec, warn=self._warn)
        ctx.emit("prompt.learning.proposer.selected", f"proposer: {self.proposer.kind} ({why})",
                 {"proposer": self.proposer.kind, "model": self.proposer.model, "reason": why})
        ctx.emit("prompt.learning.policy.loading", f"loading the {s.policy.kind} policy", s.policy.describe())
        try:
            self.policy = build_policy(s.policy)
        except Exception:
            self.proposer.close()
            raise
        ctx.emit("prompt.learning.policy.ready", f"policy ready: {s.policy.kind} ({self.policy.model})",
                 {**s.policy.describe(), "model": self.policy.model})
        self.router = CandidateRouter(ctx.serve_policy, self.policy, s.messages)
        self.reporter = Reporter(ctx, s, budget_total=self.budget, router=self.router, proposer=self.proposer)
        api_key = s.task_app_api_key or getattr(ctx, "environment_api_key", None) or os.environ.get(
            "ENVIRONMENT_API_KEY")
        self.runner = TaskAppRunner(
            s.task_app_url, api_key, job_id=ctx.job_id, env_name=s.env_name, env_config=s.env_config,
            policy_config=s.policy_config, max_concurrent=self.max_concurrent, budget=RolloutBudget(self.budget),
            cancelled=ctx.cancelled, on_rollout=self.reporter.on_rollout)
        self.reporter.runner = self.runner
        try:
            self.taskset = self.runner.check()
        except Exception:
            self.__exit__(None, None, None)
            raise
        task = as_table(self.taskset.get("task"))
        ctx.emit("prompt.learning.task_app.ready", f"task app healthy: {s.task_app_url}",
                 {"task_app_url": s.task_app_url, "env_name": s.env_name, "task_id": task.get("id"),
                  "task_name": task.get("name")})
        return self

    def __exit__(self, *exc: object) -> None:
        if hasattr(self, "runner"):
            self.runner.close()
        if self.policy is not None:
            self.policy.close()
        self.proposer.close()
