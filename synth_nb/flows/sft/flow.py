"""SFT: supervised fine-tuning on an uploaded chat JSONL (``[algorithm] type = "offline"`` or ``[job]``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from synth_nb.flows._common import resolve_data_path
from synth_nb.flows.artifacts import Artifact, FinishedJob
from synth_nb.flows.base import ConfigLike, Workload
from synth_nb.flows.health import HealthWarning
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.schema import Problem, algorithm_is
from synth_nb.flows.sft import estimate, health, plan
from synth_nb.flows.sft.artifacts import sft_artifact
from synth_nb.flows.sft.chart import CHART
from synth_nb.flows.sft.config import ALGORITHM_TRIPLES, SftConfig, check_sft
from synth_nb.flows.sft.jobs import JOBS
from synth_nb.flows.sft.samples import SAMPLE_EVENT, SAMPLES
from synth_nb.flows.training_outcome import TrainingEvents, TrainingFlow
from synth_nb.plan import Plan
from synth_nb.secrets import SecretBundle

__all__ = ["FLOW", "SftFlow"]

_METHODS = frozenset({"sft", "supervised_finetune"})


class SftFlow(TrainingFlow):
    name = "sft"
    jobs = JOBS
    label = "SFT"
    #: SFT never talks to a task app, so unlike synth-ai 0.2.24 it does not need ENVIRONMENT_API_KEY
    honoured_overrides = frozenset({"backend", "model", "dataset", "examples", "idempotency",
                                    "allow_experimental"})
    override_keys = MappingProxyType({"model": (("job", "model"),), "dataset": (("job", "data"),)})
    ignored_overrides = MappingProxyType({"task_url": "SFT does not use a task app"})
    config_model = SftConfig
    algorithm_triples = ALGORITHM_TRIPLES
    detect_hint = '[algorithm] with type = "offline" or [job] with [compute] (SFT)'
    chart = CHART
    #: what an SFT job's events report it used and gained
    training_events = TrainingEvents(CHART, tokens_event="sft.training.finish",
                                     measures=(("validation", "validation loss", "validation examples", "sft.data.validated",
                                                "n_validation"), ("train", "train loss", "the training batches", "", "")))
    #: events 0.2.24's CLI hides for SFT (bookkeeping; loss arrives as metrics)
    noise_event_types = frozenset({
        "sft.created", "sft.pricing.check.requested", "sft.pricing.check.allowed", "sft.stage", "snapshot.fetch",
        "hatchet.preflight", "hatchet.submission.attempt", "hatchet.submission.result", "sft.running",
        "sft.status", "sft.worker.alive", "sft.dispatch.selected", "sft.config.prepared",
        "sft.strategy.selected", "sft.training.args", "sft.progress", "sft.loss", "sft.upstream.status",
        SAMPLE_EVENT,  # the sample completions have views of their own (job.samples())
    })
    sample_spec = SAMPLES

    def claims(self, raw: Mapping[str, Any]) -> bool:
        return algorithm_is(raw, "offline", _METHODS) or bool(raw.get("job") and raw.get("compute"))

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        return check_sft(model)

    def unknown_key_fate(self, key: tuple[str | int, ...]) -> str:
        if key[:2] == ("hyperparameters", "parallelism"):
            return "not checked by synth-nb; sent as written in hyperparameters.parallelism"
        return "ignored (not sent)"

    def missing_files(self, config: ConfigLike) -> list[Problem]:
        named = plan.named_dataset(config)
        if named is None:  # "no [job].data" is already a warning: --dataset may name it
            return []
        key, value = named
        path = resolve_data_path(config, value, [], "dataset")
        if path.is_file():
            return []
        return [Problem(tuple(key.split(".")), f"dataset file not found: {value}",
                        f"no file at {path}; {plan.MISSING_DATASET_HINT}")]

    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        return plan.build_plan(self, config, overrides, secrets)

    def workload(self, plan: Plan) -> Workload:
        return estimate.workload(plan)

    def health(self, job: FinishedJob) -> list[HealthWarning]:
        return health.health(job)

    def artifacts(self, job: FinishedJob) -> Artifact:
        return sft_artifact(job)


FLOW = SftFlow()
