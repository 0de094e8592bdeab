"""Prompt learning (GEPA, MIPRO): a prompt optimised against a task app (``[prompt_learning]``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from synth_nb.flows._common import absolute_path
from synth_nb.flows.artifacts import Artifact, FinishedJob, unreadable_metrics, unreadable_metrics_note
from synth_nb.flows.base import ConfigLike, ExplorableJob, Flow, TaskAppRef, Workload
from synth_nb.flows.health import HealthWarning
from synth_nb.flows.outcome import Gain, Usage
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.prompt_learning import estimate, health, outcome, plan
from synth_nb.flows.prompt_learning.chart import CHART
from synth_nb.flows.prompt_learning.checks import check_prompt_learning, normalise_prompt_learning
from synth_nb.flows.prompt_learning.config import PromptLearningConfig
from synth_nb.flows.prompt_learning.explorer import Explorer
from synth_nb.flows.prompt_learning.explorer_events import EXPLORER_EVENT_TYPES, PROPOSAL_METRIC, explore
from synth_nb.flows.prompt_learning.jobs import JOBS
from synth_nb.flows.prompt_learning.overrides import ROWS
from synth_nb.flows.prompt_learning.plan import with_rollout_limit
from synth_nb.flows.prompt_learning.scores import SCORE_EVENT_TYPES, job_scores
from synth_nb.flows.prompt_learning.summary import job_summary, write_summary
from synth_nb.flows.schema import Problem
from synth_nb.plan import Plan
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, SecretBundle

__all__ = ["DEFAULT_RESULTS_FOLDER", "FLOW", "PromptLearningFlow"]

TABLE = "prompt_learning"
ALGORITHMS = frozenset({"gepa", "mipro"})
#: where result files go when the config names no ``results_folder`` (beside the config)
DEFAULT_RESULTS_FOLDER = "results"
_DATA_FROM_TASK_APP = "prompt learning reads its data through the task app"


def _results_folder_setting(raw: Mapping[str, Any]) -> str | None:
    table = raw.get(TABLE)
    for source in (table if isinstance(table, Mapping) else {}, raw):
        value = source.get("results_folder")
        if isinstance(value, str) and value.strip():
            return value
    return None


class PromptLearningFlow(Flow):
    name = "prompt_learning"
    jobs = JOBS
    label = "prompt learning"
    required_secrets = (SYNTH_API_KEY, ENVIRONMENT_API_KEY)
    honoured_overrides = frozenset({"backend", "task_url", "idempotency"})
    override_keys = MappingProxyType({"task_url": (("prompt_learning", "task_app_url"),)})
    override_rows = ROWS
    example_task_app = "banking"
    ignored_overrides = MappingProxyType({
        "model": "set [prompt_learning.policy].model in the config instead",
        "allow_experimental": "prompt learning does not train a Qwen base model",
        "dataset": _DATA_FROM_TASK_APP,
        "examples": _DATA_FROM_TASK_APP,
    })
    config_model = PromptLearningConfig
    detect_hint = '[prompt_learning] with algorithm = "gepa" or "mipro" (prompt learning)'
    chart = CHART
    explorer_event_types = EXPLORER_EVENT_TYPES
    #: events 0.2.24's CLI hides for GEPA / MIPRO (search internals)
    noise_event_types = frozenset({
        "mipro.tpe.update", "mipro.tpe.rankings", "mipro.tpe.selected", "mipro.trial.started",
        "mipro.trial.minibatch", "mipro.bootstrap.progress", "mipro.iteration.skip_generation",
        "mipro.trial.duplicate", "mipro.instruction.proposed", "gepa.transformation.proposed",
        "prompt.learning.proposal.scored", "prompt.learning.eval.summary", "prompt.learning.validation.scored",
        "prompt.learning.final.results", "prompt.learning.policy.tokens", "prompt.learning.worker.alive",
    })

    def claims(self, raw: Mapping[str, Any]) -> bool:
        return TABLE in raw

    def algorithm_of(self, raw: Mapping[str, Any]) -> str | None:
        table = raw.get(TABLE)
        value = table.get("algorithm") if isinstance(table, Mapping) else None
        algorithm = value.lower() if isinstance(value, str) else ""
        return algorithm if algorithm in ALGORITHMS else None

    def normalise(self, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        return normalise_prompt_learning(raw)

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        return check_prompt_learning(model, raw)

    def unknown_key_fate(self, key: tuple[str | int, ...]) -> str:
        if key[0] == TABLE:
            return "not checked by synth-nb; sent to the backend as written"
        return f"ignored (only [{TABLE}] is sent)"

    def results_folder(self, config: ConfigLike) -> Path:
        """``results_folder`` of the config (relative to its folder), else ``results`` beside it."""
        target = Path(_results_folder_setting(config.raw) or DEFAULT_RESULTS_FOLDER).expanduser()
        return target if target.is_absolute() else absolute_path(Path(config.path).parent / target)

    def config_notes(self, config: ConfigLike) -> list[str]:
        if _results_folder_setting(config.raw) is not None:
            return []
        return [f"no results_folder in [{TABLE}]: result files will be written to {self.results_folder(config)} "
                f"(set {TABLE}.results_folder to choose another folder)"]

    def task_app_ref(self, config: ConfigLike) -> TaskAppRef:
        """``[prompt_learning].task_app_id`` (or the algorithm's ``env_name``) and ``task_app_url``."""
        table = config.raw.get(TABLE) or {}
        names = [table.get("task_app_id"), *((table.get(a) or {}).get("env_name") for a in sorted(ALGORITHMS))]
        url = table.get("task_app_url")
        return TaskAppRef(tuple(n for n in names if isinstance(n, str)), url if isinstance(url, str) else None)

    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        return plan.build_plan(self, config, overrides, secrets)

    def workload(self, plan: Plan) -> Workload:
        return estimate.workload(plan)

    def with_rollout_limit(self, plan: Plan, limit: int) -> Plan:
        return with_rollout_limit(plan, limit)

    def explorer(self, job: ExplorableJob) -> Explorer:
        """Candidates, lineage, Pareto front, per-seed wins and prompt diffs from the events so far."""
        steps, values = job.metrics.series(PROPOSAL_METRIC)
        scores = [{"name": PROPOSAL_METRIC, "step": s, "value": v}
                  for s, v in zip(steps.tolist(), values.tolist(), strict=True)]
        explorer = explore(job.events.of_types(EXPLORER_EVENT_TYPES), scores, job_id=job.id,
                           status_doc=job.status_doc)
        unreadable = unreadable_metrics_note(unreadable_metrics(job))
        if unreadable:
            explorer.notes.append(unreadable)
        return explorer

    def headline_scores(self, job: ExplorableJob) -> dict[str, float]:
        """Read where synth-ai 0.2.24 reads them: ``best_score`` / ``score`` fields, baselines named in
        messages (``baseline val_accuracy=0.400``), the status document."""
        scores = job_scores(job.status_doc, job.events.of_types(SCORE_EVENT_TYPES))
        found = {"baseline_score": scores.baseline, "best_score": scores.best}
        return {key: value for key, value in found.items() if value is not None}

    def usage(self, job: FinishedJob) -> Usage:
        return outcome.usage(job)

    def gains(self, job: FinishedJob) -> list[Gain]:
        return outcome.gains(job)

    def health(self, job: FinishedJob) -> list[HealthWarning]:
        return health.health(job)

    def artifacts(self, job: FinishedJob) -> Artifact:
        # the text alone: its curve is not shown here, so it is not drawn (the bundle's report asks for this
        # at every job's end)
        return Artifact(title=f"Prompt-learning summary: {job.id}", markdown=job_summary(job, draw_curve=False).markdown)

    def write_results(self, job: FinishedJob, folder: Path) -> Path:
        return write_summary(job, folder)


FLOW = PromptLearningFlow()
