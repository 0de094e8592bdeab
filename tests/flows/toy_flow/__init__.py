"""A fourth flow, built as a flow is: this folder (its config schema, plan, chart and its own override row)
and one registry line (``registered(FLOW)`` in the tests, ``BUILT_IN`` for a flow shipped in the package).

It touches nothing else: its ``--rounds`` flag, the wizard's Rounds field and the config key the flag
replaces all come from ``overrides.ROWS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import Field

from synth_nb.contract import FlowEndpoints
from synth_nb.flows import Flow
from synth_nb.flows.artifacts import Artifact, FinishedJob
from synth_nb.flows.base import ConfigLike
from synth_nb.flows.chart import ChartSpec, SeriesSpec
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.schema import ExtraModel, Problem, warning
from synth_nb.plan import Plan, Step
from synth_nb.secrets import SYNTH_API_KEY, SecretBundle

from .overrides import ROWS

__all__ = ["FLOW", "ToyFlow"]


class ToyTable(ExtraModel):
    rounds: int = Field(gt=0)
    prompt: str


class ToyConfig(ExtraModel):
    toy: ToyTable


class ToyFlow(Flow):
    name = "toy"
    label = "toy"
    id_prefix = "toy_"
    endpoints = FlowEndpoints(create="/toy/jobs", status="/toy/jobs/{job_id}", events="/toy/jobs/{job_id}/events",
                              metrics="/toy/jobs/{job_id}/metrics", cancel="/toy/jobs/{job_id}/cancel")
    required_secrets = (SYNTH_API_KEY,)
    honoured_overrides = frozenset({"backend", "idempotency"})
    override_rows = ROWS
    ignored_overrides = MappingProxyType({"model": "toy jobs have no model"})
    config_model = ToyConfig
    detect_hint = "[toy] with rounds and prompt (toy)"
    chart = ChartSpec(title="Toy score", xlabel="round", ylabel="score",
                      series=(SeriesSpec("score", "toy score", frozenset({"toy.score"}), higher_is_better=True),))
    noise_event_types = frozenset({"toy.tick"})

    def claims(self, raw: Mapping[str, Any]) -> bool:
        return "toy" in raw

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if model.toy.rounds > 10:
            problems.append(Problem(("toy", "rounds"), "at most 10 rounds", "set rounds = 10 or fewer"))
        if model.toy.rounds == 1:
            problems.append(warning("a single round shows no curve"))
        return problems

    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        warnings = [*config.warnings, *overrides.ignored_by(self)]
        body = {"rounds": config.raw["toy"]["rounds"], "prompt": config.raw["toy"]["prompt"],
                "api_key": secrets.secret_value(SYNTH_API_KEY)}
        step = Step("POST", self.endpoints.create, body, headers={"Idempotency-Key": overrides.idempotency or "toy-1"},
                    description="create the toy job")
        return Plan(flow=self.name, endpoints=self.endpoints, algorithm=None, steps=[step], config_path=config.path,
                    backend_url=overrides.backend or "", warnings=warnings, secrets=secrets.values())

    def artifacts(self, job: FinishedJob) -> Artifact:
        best = max((m.value for m in job.metrics if m.name == "toy.score"), default=None)
        return Artifact(title=f"Toy result: {job.id}", markdown=f"### Toy `{job.id}`: best score {best}")


FLOW = ToyFlow()
