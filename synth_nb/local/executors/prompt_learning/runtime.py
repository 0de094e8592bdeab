"""What both prompt-learning executors set up around a search: proposer, policy, interceptor, task app.

``PromptRuntime`` is a context manager so the policy (maybe a loaded torch model), the HTTP pools and the
proposer client are released however the search ends. A policy or proposer given as ``local_model`` is served
by a ``transformers serve`` process the backend starts (or one it already runs for that model: the backend
keeps it for later jobs and stops it when it stops); a job run without a backend's set of servers (a test's
context) starts its own and stops it at the end.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.proposers import Proposer
from synth_nb.local.executors.prompt_learning.report import Candidate, Outcome, Reporter
from synth_nb.local.executors.prompt_learning.rollouts import RolloutBudget, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter
from synth_nb.local.executors.prompt_learning.settings import PromptSettings, ProposerSpec, as_table
from synth_nb.local.model_server import ModelServer, ModelServers
from synth_nb.local.policies import Policy, PolicySpec, build_policy

__all__ = ["PromptRuntime", "SearchExecutor", "choose_proposer", "seed_split"]

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def seed_split(taskset: dict[str, Any], default: str) -> str:
    """The held-out split: ``test`` when the task app declares one, else ``default``."""
    splits = (taskset.get("dataset") or {}).get("splits") if isinstance(taskset, dict) else None
    return "test" if isinstance(splits, dict | list) and "test" in splits else default


def choose_proposer(spec: ProposerSpec) -> tuple[ProposerSpec, str]:
    """The proposer to use and why: the configured model when reachable with a key, else offline."""
    if spec.offline:
        return spec, "no proposer model URL configured; using the offline deterministic proposer"
    if spec.local_model and not spec.url:  # outside a job (a dry proposal): its server is not started for that
        return ProposerSpec(metaprompt=spec.metaprompt), (
            f"local model {spec.local_model!r} is served when the job runs; the offline deterministic proposer "
            "stands in here")
    if spec.local_model:
        return spec, f"local model {spec.local_model!r} served on 127.0.0.1 at {spec.url}"
    key = PolicySpec("upstream", provider=spec.provider, api_key_env=spec.api_key_env).resolve_key()
    if key or urlsplit(spec.url or "").hostname in _LOOPBACK:
        return spec, f"configured proposer model {spec.model!r} at {spec.url}"
    wanted = spec.api_key_env or f"the {spec.provider or 'provider'} API key variable"
    return ProposerSpec(metaprompt=spec.metaprompt), (
        f"no API key for proposer model {spec.model!r} (set {wanted}); using the offline deterministic proposer")


class SearchExecutor:
    """What the GEPA and MIPRO executors share: they run prompt-learning jobs, whose body their own
    ``parse_settings`` checks."""

    name: ClassVar[str]

    def parse_settings(self, body: dict[str, Any]) -> object:
        raise NotImplementedError

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        if kind != "prompt_learning":
            raise ExecutorInputError(f"the {self.name} executor runs prompt-learning jobs, not {kind!r}")
        self.parse_settings(body)


class PromptRuntime:
    def __init__(self, ctx: JobContext, settings: PromptSettings, *, budget: int | None, max_concurrent: int,
                 seed: int = 0) -> None:
        self.ctx = ctx
        self.settings = settings
        self.budget = budget
        self.max_concurrent = max_concurrent
        self.seed = seed
        self._warned: set[str] = set()
        self.policy: Policy | None = None
        self.taskset: dict[str, Any] = {}
        self._own_servers: ModelServers | None = None

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.ctx.emit("prompt.learning.proposer.fallback", message, {"proposer": "offline"}, level="warning")

    def _serve(self, name: str, role: str) -> ModelServer:
        """The running model server for ``name`` (the backend's, else one of this job's own), announced."""
        servers = getattr(self.ctx, "model_servers", None)
        if servers is None:
            if self._own_servers is None:
                self._own_servers = ModelServers(self.ctx.work_dir / "model-servers")
            servers = self._own_servers
        self.ctx.emit("prompt.learning.model_server.starting",
                      f"{role}: serving local model {name!r} with transformers serve on 127.0.0.1",
                      {"model": name, "role": role})
        server, started = servers.ensure(name, seed=self.seed, cancelled=self.ctx.cancelled)
        about = server.describe()
        self.ctx.emit("prompt.learning.model_server.ready",
                      f"{role}: {about['served']} {'started' if started else 'already running'} at {server.url} "
                      f"(pid {server.pid}" + (f", ready in {about['start_seconds']:.0f}s)" if started else ")"),
                      {**about, "role": role, "started": started})
        return server

    def _listed(self, url: str, key: str | None, role: str) -> str:
        """The model a server of the user's lists, for a config that gave its URL but no model name."""
        from synth_nb.local.policies.upstream import served_model

        model = served_model(url, key)
        self.ctx.emit("prompt.learning.model_server.ready", f"{role}: model {model!r} of the server at {url}",
                      {"role": role, "url": url, "model_id": model, "served": "a server of yours", "started": False})
        return model

    def _local_models(self) -> None:
        """Point a ``local_model`` policy or proposer at its running server, and name the model of a server
        given by URL alone."""
        s = self.settings
        if s.policy.local_model:
            server = self._serve(s.policy.local_model, "policy")
            s.policy = replace(s.policy, url=server.url, model=server.model_id)
        elif s.policy.kind == "upstream" and s.policy.url and not s.policy.model:
            s.policy = replace(s.policy, model=self._listed(s.policy.url, s.policy.resolve_key(), "policy"))
        if s.proposer.local_model:
            server = self._serve(s.proposer.local_model, "proposer")
            s.proposer = replace(s.proposer, url=server.url, model=server.model_id)
        elif s.proposer.url and not s.proposer.model:
            key = PolicySpec("upstream", provider=s.proposer.provider, api_key_env=s.proposer.api_key_env).resolve_key()
            s.proposer = replace(s.proposer, model=self._listed(s.proposer.url, key, "proposer"))

    def __enter__(self) -> PromptRuntime:
        ctx, s = self.ctx, self.settings
        try:
            self._local_models()
        except Exception:
            self._stop_own_servers()
            raise
        spec, why = choose_proposer(s.proposer)
        self.proposer = Proposer(spec, warn=self._warn)
        ctx.emit("prompt.learning.proposer.selected", f"proposer: {self.proposer.kind} ({why})",
                 {"proposer": self.proposer.kind, "model": self.proposer.model, "reason": why})
        ctx.emit("prompt.learning.policy.loading", f"loading the {s.policy.kind} policy", s.policy.describe())
        try:
            self.policy = build_policy(s.policy)
        except Exception:
            self.proposer.close()
            self._stop_own_servers()
            raise
        ctx.emit("prompt.learning.policy.ready", f"policy ready: {s.policy.kind} ({self.policy.model})",
                 {**s.policy.describe(), "model": self.policy.model})
        self.router = CandidateRouter(ctx.serve_policy, self.policy, s.messages)
        self.reporter = Reporter(ctx, s, budget_total=self.budget, router=self.router, proposer=self.proposer)
        api_key = s.task_app_api_key or getattr(ctx, "environment_api_key", None) or os.environ.get(
            "ENVIRONMENT_API_KEY")
        served_here = getattr(ctx, "task_app_in_process", None)  # a backend's context: its own task apps
        in_process = served_here(s.task_app_url) if served_here is not None else None
        self.runner = TaskAppRunner(
            s.task_app_url, api_key, job_id=ctx.job_id, env_name=s.env_name, env_config=s.env_config,
            policy_config=s.policy_config, max_concurrent=self.max_concurrent, budget=RolloutBudget(self.budget),
            cancelled=ctx.cancelled, on_rollout=self.reporter.on_rollout, in_process=in_process)
        self.reporter.runner = self.runner
        try:
            self.taskset = self.runner.check()
        except Exception:
            self.__exit__(None, None, None)
            raise
        task = as_table(self.taskset.get("task"))
        ctx.emit("prompt.learning.task_app.ready", f"task app healthy: {s.task_app_url}",
                 {"task_app_url": s.task_app_url, "env_name": s.env_name, "task_id": task.get("id"),
                  "task_name": task.get("name"),
                  # "in-process": an example this backend serves itself, its /rollout called without HTTP
                  "transport": "in-process" if in_process is not None else "http"})
        return self

    def outcome(self, candidates: list[Candidate], reason: str, *, budget_key: str, heldout_seeds: list[int],
                heldout_split: str, top_k: int) -> tuple[Outcome, str] | None:
        """The stopped search's outcome (held-out scores, best prompt) and why it stopped; None when it was
        cancelled before the baseline was scored, an error naming ``budget_key`` when it ran out first."""
        cancelled = self.ctx.cancelled.is_set()
        if not candidates:
            if cancelled:
                return None
            raise RuntimeError(f"the search stopped before the baseline prompt was scored ({reason}); "
                               f"raise {budget_key}")
        self.reporter.progress(force=True)
        outcome = self.reporter.finish(candidates, heldout_seeds=heldout_seeds, heldout_split=heldout_split,
                                       top_k=top_k)
        return outcome, "cancelled" if cancelled else reason

    def _stop_own_servers(self) -> None:
        if self._own_servers is not None:
            self._own_servers.stop_all()

    def __exit__(self, *exc: object) -> None:
        if hasattr(self, "runner"):
            self.runner.close()
        if self.policy is not None:
            self.policy.close()
        self.proposer.close()
        self._stop_own_servers()
