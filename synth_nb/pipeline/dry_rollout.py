"""One real rollout of a job before it exists: asked of the backend, which runs the job's policy for it.

``POST {backend}/dry-rollout`` with the body the job would be created with: the backend serves the policy
that job would use, the task app runs one ``/rollout`` of the job's first seed through it, and the answer
is the reward, its latency and the trace (the prompt the policy received and its reply). The embedded
backend offers it; a backend without the route is said to offer none, and nothing else is tried. No job is
created either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from synth_nb.backend import display_url
from synth_nb.pipeline.target import Target
from synth_nb.plan import Plan, mask_payload
from synth_nb.secrets import mask_text

__all__ = ["DryRollout", "dry_rollout"]

#: loading a policy (an embedding model, RL's starting model) may take a while on a busy machine
TIMEOUT = 600.0
#: characters of each traced message shown on the card
SHOWN_CHARS = 400


@dataclass(frozen=True)
class DryRollout:
    """What the dry rollout found: the reward and latency, or why there is none."""

    offered: bool
    seed: int | None = None
    split: str | None = None
    reward: float | None = None
    latency_ms: float | None = None
    #: one entry per policy call: the messages it received, its reply, token usage, latency
    trace: list[dict[str, Any]] = field(default_factory=list)
    policy: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.offered and self.problem is None and self.reward is not None

    @property
    def tokens(self) -> int | None:
        """Tokens the rollout's policy calls used (prompt + completion), when the policy reported them."""
        counts = [int(c.get("usage", {}).get("total_tokens") or 0) for c in self.trace]
        return sum(counts) if any(counts) else None

    @property
    def prompt_tokens(self) -> int | None:
        """Prompt tokens of the rollout's policy calls, when the policy reported them."""
        counts = [int(c.get("usage", {}).get("prompt_tokens") or 0) for c in self.trace]
        return sum(counts) if any(counts) else None

    def lines(self) -> list[str]:
        if not self.offered or self.problem is not None:
            return [f"dry rollout: {self.problem}"]
        where = f"seed {self.seed}" + (f" ({self.split} split)" if self.split else "")
        policy = self.policy.get("model") or self.policy.get("policy") or "the configured policy"
        out = [f"dry rollout: {where} through the task app with {policy}: reward {self.reward:g} "
               f"in {self.latency_ms:.0f} ms"]
        for number, call in enumerate(self.trace, start=1):
            for message in call.get("messages") or []:
                out.append(f"  call {number} sent [{message.get('role')}]: {_shown(message.get('content'))}")
            out.append(f"  call {number} reply: {_reply(call.get('response') or {})}  "
                       f"({call.get('latency_ms', 0):.0f} ms)")
        return out


def _shown(text: Any) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= SHOWN_CHARS else flat[:SHOWN_CHARS] + " …"


def _reply(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls") or []
    if calls:
        return "; ".join(f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
                         for c in calls if isinstance(c, dict))
    return _shown(message.get("content"))


def _refused(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = response.text[:300]
    return f"the backend refused it (HTTP {response.status_code}): {detail}"


def dry_rollout(plan: Plan, target: Target, api_key: str, *, seed: int, split: str | None = None,
                timeout: float = TIMEOUT, transport: httpx.BaseTransport | None = None) -> DryRollout:
    """Ask ``target`` for one rollout of ``plan``'s job at ``seed``; never raises for what the backend says."""
    secrets = tuple(s.get_secret_value() for s in plan.secrets if s.get_secret_value()) + (api_key,)
    if not target.started:
        return DryRollout(False, problem="the embedded backend is not running, so it cannot run one")
    request = {"kind": plan.flow, "body": plan.create_step.body, "seed": seed, "split": split}
    try:
        with httpx.Client(timeout=timeout, transport=transport) as http:
            response = http.post(f"{target.url.rstrip('/')}/dry-rollout", json=request,
                                 headers={"Authorization": f"Bearer {api_key}"})
    except httpx.HTTPError as exc:
        return DryRollout(True, problem=f"the backend could not be asked ({type(exc).__name__})")
    if response.status_code in (404, 405):
        return DryRollout(False, problem=f"not offered by the backend at {display_url(target.url)} (the embedded backend, "
                                         "--backend local, runs one); skipped")
    if response.status_code != 200:
        return DryRollout(True, problem=mask_text(_refused(response), secrets))
    doc = mask_payload(json.loads(mask_text(response.text, secrets)))
    problem = doc.get("error")
    return DryRollout(True, seed=doc.get("seed"), split=doc.get("split"), reward=doc.get("reward"),
                      latency_ms=doc.get("latency_ms"), trace=list(doc.get("trace") or []),
                      policy=dict(doc.get("policy") or {}),
                      problem=f"the rollout failed: {problem}" if problem else None)
