"""The pre-flight card: everything worth knowing about a job before paying for it, and nothing sent.

Per config: one authenticated read of the backend (``preflight.check_backend``: the verdict on a backend
needs a request to it), the device an SFT or RL job trains on (``training_device``), the task app's
``/health`` and ``/task_info`` with latency (RL and prompt learning), one real dry rollout with its trace (``pipeline.dry_rollout``), the flow's facts (SFT: rows,
tokens and the validation split), and an estimate labelled as one (``pipeline.estimate``). The terminal
prints ``lines()``; a notebook displays the card itself, whose ``_repr_html_`` is static HTML that survives
saving. Building a card never creates a job.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from synth_nb.backend import display_url
from synth_nb.markup import html_text, no_math_html
from synth_nb.pipeline.dry_rollout import DryRollout, dry_rollout
from synth_nb.pipeline.estimate import Estimate, estimate
from synth_nb.pipeline.preflight import (
    BackendCheck,
    TaskAppCheck,
    check_backend,
    check_task_app,
    task_app_for,
)
from synth_nb.pipeline.prepare import Prepared
from synth_nb.pipeline.target import Target
from synth_nb.pipeline.training_device import device_line

__all__ = ["PreflightCard", "build_card", "build_cards", "check_configs"]


@dataclass
class PreflightCard:
    """What the checks of one config found; ``ok`` is False when something would stop the job."""

    config: Path
    backend: str
    flow: str | None = None
    algorithm: str | None = None
    problem: str | None = None
    #: the authenticated read of the backend (None: the config stopped the card before it was asked)
    backend_check: BackendCheck | None = None
    #: which device the job trains on (``device: …``; None: the flow trains no weights)
    device: str | None = None
    task_app: TaskAppCheck | None = None
    dry: DryRollout | None = None
    facts: tuple[str, ...] = ()
    estimate: Estimate | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def _config_ok(self) -> bool:
        if self.problem is not None or (self.task_app is not None and not self.task_app.ok):
            return False
        return self.dry is None or not self.dry.offered or self.dry.ok

    @property
    def ok(self) -> bool:
        """Nothing found would stop the job, and the backend answered."""
        return self._config_ok and self.backend_check is not None and self.backend_check.ok

    @property
    def verdict(self) -> str:
        """"ready" only when the backend answered a request; "backend not contacted" when none was sent."""
        if not self._config_ok:
            return "not ready"
        return "backend not contacted" if self.backend_check is None else self.backend_check.verdict

    @property
    def title(self) -> str:
        kind = (self.flow or "config") + (f"/{self.algorithm}" if self.algorithm else "")
        return f"pre-flight check: {self.config.name} [{kind}]"

    def lines(self) -> list[str]:
        out = [f"== {self.title}", f"backend: {self.backend}"]
        if self.problem is not None:
            return [*out, f"problem: {self.problem}", "verdict: not ready (no job was sent)"]
        if self.backend_check is not None:
            out.append(self.backend_check.line())
        if self.device is not None:
            out.append(self.device)
        if self.task_app is not None:
            out += self.task_app.lines()
        if self.dry is not None:
            out += self.dry.lines()
        out += list(self.facts)
        if self.estimate is not None:
            out += self.estimate.lines()
        out += [f"warning: {w}" for w in self.warnings]
        out.append(f"verdict: {self.verdict} (no job was sent)")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The card as JSON-able data (``--check --json``)."""
        dry, est = self.dry, self.estimate
        return {
            "config": str(self.config), "flow": self.flow, "algorithm": self.algorithm, "backend": self.backend,
            "ok": self.ok, "verdict": self.verdict, "problem": self.problem, "warnings": self.warnings,
            "facts": list(self.facts), "device": self.device,
            "backend_check": None if self.backend_check is None else dataclasses.asdict(self.backend_check),
            "task_app": None if self.task_app is None else {
                "url": self.task_app.url, "ok": self.task_app.ok, "health_ms": self.task_app.latency_ms,
                "task_info_ms": self.task_app.task_info_ms, "problem": self.task_app.problem},
            "dry_rollout": None if dry is None else {
                "offered": dry.offered, "seed": dry.seed, "split": dry.split, "reward": dry.reward,
                "latency_ms": dry.latency_ms, "trace": dry.trace, "policy": dry.policy, "problem": dry.problem,
                "proposal": None if dry.proposal is None else dataclasses.asdict(dry.proposal),
                "training": None if dry.training is None else dataclasses.asdict(dry.training),
                "training_problem": dry.training_problem},
            "estimate": None if est is None else {
                "rollouts": est.workload.rollouts, "formula": est.workload.formula, "tokens": est.tokens,
                "tokens_how": est.tokens_how, "tokens_floor": est.tokens_floor,
                "not_estimated": list(est.gaps),
                "wall_seconds": est.wall_seconds, "wall": est.wall, "wall_floor": est.wall_floor,
                "wall_how": est.wall_how, "cost": est.cost},
        }

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        return card_html(self)


def _section(title: str, rows: Sequence[str], *, pre: bool = False) -> str:
    if not rows:
        return ""
    body = (f"<pre style='white-space:pre-wrap;margin:0'>{html_text(chr(10).join(rows))}</pre>" if pre
            else "<ul style='margin:0;padding-left:1.2em'>" + "".join(f"<li>{html_text(r)}</li>" for r in rows)
            + "</ul>")
    return f"<section><h4 style='margin:.5em 0 .2em'>{html_text(title)}</h4>{body}</section>"


def card_html(card: PreflightCard) -> str:
    """Static HTML of the card (no script, no widget), so it stays in the saved notebook as it is."""
    verdict = card.verdict
    colour = "#2e7d32" if card.ok else "#8a6d00" if verdict == "backend not contacted" else "#c62828"
    parts = [f"<div role='region' aria-label='{html_text(card.title)}' "
             "style='border:1px solid #bbb;border-radius:6px;padding:.6em 1em;max-width:60em'>",
             f"<h3 style='margin:.2em 0'>{html_text(card.title)}</h3>",
             f"<p style='margin:.2em 0'>backend {html_text(card.backend)} &middot; "
             f"<strong style='color:{colour}'>{verdict}</strong> (no job was sent)</p>"]
    if card.problem is not None:
        parts.append(_section("problem", [card.problem], pre=True))
    if card.backend_check is not None:
        parts.append(_section("backend", [card.backend_check.line().removeprefix("backend check: ")]))
    if card.device is not None:
        parts.append(_section("device", [card.device.removeprefix("device: ")]))
    if card.task_app is not None:
        parts.append(_section("task app", card.task_app.lines()))
    if card.dry is not None:
        lines = card.dry.lines()
        training = [line.removeprefix("dry training: ") for line in lines if line.startswith("dry training: ")]
        head, *trace = [line for line in lines if not line.startswith("dry training: ")] or [""]
        proposal = [card.dry.proposal.line().removeprefix("dry proposal: ")] if card.dry.proposal else []
        parts.append(_section("dry rollout", [head.removeprefix("dry rollout: ")] if head else []))
        parts.append(_section("trace (prompt sent, reply)", [t.strip() for t in trace[:len(trace) - len(proposal)]],
                              pre=True))
        parts.append(_section("dry proposal", proposal))
        parts.append(_section("dry training", training))
    parts.append(_section("data", list(card.facts)))
    if card.estimate is not None:
        head, *rows = card.estimate.lines()
        parts.append(_section(head.rstrip(":"), [r.strip() for r in rows]))
    parts.append(_section("warnings", card.warnings))
    return no_math_html("".join(parts) + "</div>")


def build_card(item: Prepared, target: Target, api_key: str | None, *,
               transport: httpx.BaseTransport | None = None) -> PreflightCard:
    """Run every check of one prepared config against ``target``; never creates a job."""
    from synth_nb.flows import get_flow

    card = PreflightCard(config=item.path, backend=display_url(target.url))
    if item.config is not None:
        card.flow, card.algorithm = item.config.flow, item.config.algorithm
    plan = item.plan
    if item.error is not None or plan is None:
        card.problem = str(item.error or "the config could not be turned into a plan")
        return card
    card.warnings = list(plan.warnings)
    flow = get_flow(plan.flow)
    card.backend_check = check_backend(target, api_key, flow.endpoints, transport=transport)
    if flow.trains_weights:
        card.device = device_line(target, api_key, flow.name, transport=transport)
    work = flow.workload(plan)
    card.facts = work.facts
    app = task_app_for(item)
    if app is not None:
        card.task_app = check_task_app(app, transport=transport)
        if not card.task_app.ok:
            card.dry = DryRollout(True, problem="skipped: the task app is not usable")
        elif card.backend_check.contacted and not card.backend_check.ok:
            card.dry = DryRollout(True, problem="skipped: the backend check failed")
        elif api_key is not None:
            card.dry = dry_rollout(plan, target, api_key, seed=work.seed or 0, split=work.split,
                                   proposal=work.search, rehearse=work.rollouts if work.search is not None else None,
                                   training=flow.trains_weights, transport=transport)
    elif flow.trains_weights and target.is_embedded and api_key is not None and card.backend_check.ok:
        card.dry = dry_rollout(plan, target, api_key, seed=None, training=True, transport=transport)
    card.estimate = estimate(work, card.dry, target)
    return card


def build_cards(prepared: Sequence[Prepared], target: Target, api_key: str | None) -> list[PreflightCard]:
    return [build_card(item, target, api_key) for item in prepared]


def check_configs(prepared: Sequence[Prepared], target: Target) -> tuple[list[PreflightCard], list[str]]:
    """What ``--check`` (terminal, magic, wizard) runs: the cards, and every secret they could echo.

    A missing API key is not an error here: the card says what is missing and skips the dry rollout.
    The embedded backend gets the resolved keys first, as a submission would give them.
    """
    from synth_nb.errors import SecretsError
    from synth_nb.pipeline.backend_keys import share_keys
    from synth_nb.pipeline.clients import secret_values
    from synth_nb.pipeline.target import api_key

    try:
        key: str | None = api_key(target, [p.secrets for p in prepared])
    except SecretsError:
        key = None
    share_keys(target, [p.secrets for p in prepared])
    cards = build_cards(prepared, target, key)
    return cards, secret_values(key or "", [p.plan for p in prepared if p.plan is not None])


def cards_json(cards: Sequence[PreflightCard]) -> str:
    docs = [card.to_dict() for card in cards]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False, default=str)
