"""RL: a policy trained online against a task app (``[algorithm] type = "online"``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from synth_nb.flows.artifacts import Artifact, FinishedJob
from synth_nb.flows.base import ConfigLike, TaskAppRef, Workload
from synth_nb.flows.health import HealthWarning
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.rl import estimate, health, plan
from synth_nb.flows.rl.artifacts import rl_artifact
from synth_nb.flows.rl.chart import CHART
from synth_nb.flows.rl.config import ALGORITHM_TRIPLES, RlConfig, check_rl
from synth_nb.flows.rl.jobs import JOBS
from synth_nb.flows.rl.rollouts import ROLLOUT_EVENT, ROLLOUTS
from synth_nb.flows.schema import Problem, algorithm_is
from synth_nb.flows.training_outcome import TrainingEvents, TrainingFlow
from synth_nb.plan import Plan
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, SecretBundle

__all__ = ["FLOW", "RlFlow"]

_METHODS = frozenset({"policy_gradient", "ppo", "gspo"})
_DATA_FROM_TASK_APP = "RL collects its data from the task app"


class RlFlow(TrainingFlow):
    name = "rl"
    jobs = JOBS
    label = "RL"
    required_secrets = (SYNTH_API_KEY, ENVIRONMENT_API_KEY)
    honoured_overrides = frozenset({"backend", "model", "task_url", "idempotency", "allow_experimental"})
    override_keys = MappingProxyType({"model": (("model", "base"), ("model", "source")),
                                      "task_url": (("services", "task_url"),)})
    ignored_overrides = MappingProxyType({"dataset": _DATA_FROM_TASK_APP, "examples": _DATA_FROM_TASK_APP})
    config_model = RlConfig
    algorithm_triples = ALGORITHM_TRIPLES
    detect_hint = '[algorithm] with type = "online" or [rollout] with [policy] or [model] (RL)'
    chart = CHART
    #: what an RL job's events report it used and gained
    training_events = TrainingEvents(CHART, tokens_event="rl.train.completed", step_event="rl.train.step",
                                     eval_event="rl.eval.started",
                                     measures=(("eval", "eval reward", "evaluation seeds", "rl.eval.started", "seeds"),
                                               ("train", "mean training reward", "the training rollouts", "", "")))
    example_task_app = "charclass"
    #: 0.2.24's CLI hides RL events that mention the hosted infrastructure
    noise_words = ("modal", "hatchet")
    sample_spec = ROLLOUTS
    #: a dozen sampled rollouts per step would bury the step lines: they have views of their own
    noise_event_types = frozenset({ROLLOUT_EVENT})

    def claims(self, raw: Mapping[str, Any]) -> bool:
        if algorithm_is(raw, "online", _METHODS):
            return True
        return bool(raw.get("rollout") and (raw.get("policy") or raw.get("model")))

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        return check_rl(model)

    def unknown_key_fate(self, key: tuple[str | int, ...]) -> str:
        if key[0] == "smoke":
            return "removed before sending ([smoke] is local-only)"
        return "not checked by synth-nb; sent to the backend as written"

    def task_app_ref(self, config: ConfigLike) -> TaskAppRef:
        """``[rollout].env_name`` and ``[services].task_url``."""
        name = (config.raw.get("rollout") or {}).get("env_name")
        url = (config.raw.get("services") or {}).get("task_url")
        return TaskAppRef((name,) if isinstance(name, str) else (), url if isinstance(url, str) else None)

    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        return plan.build_plan(self, config, overrides, secrets)

    def artifacts(self, job: FinishedJob) -> Artifact:
        return rl_artifact(job)

    def workload(self, plan: Plan) -> Workload:
        return estimate.workload(plan)

    def health(self, job: FinishedJob) -> list[HealthWarning]:
        return health.health(job)


FLOW = RlFlow()
