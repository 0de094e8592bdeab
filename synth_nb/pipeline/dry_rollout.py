"""One real rollout of a job before it exists: asked of the backend, which runs the job's policy for it.

``POST {backend}/dry-rollout`` with the body the job would be created with: the backend serves the policy
that job would use, the task app runs one ``/rollout`` of the job's first seed through it, and the answer
is the reward, its latency and the trace (the prompt the policy received and its reply). The embedded
backend offers it; a backend without the route is said to offer none, and nothing else is tried. No job is
created either way.

For a prompt search, the same request asks for one dry proposal (``proposal``: the seeds one of the job's
proposals grounds itself on, and the job's concurrency): the backend scores the baseline prompt on them,
lets the job's proposer write one new prompt from those rollouts, and scores it on the same seeds. What
that shows (``DryProposal``) is what the estimate multiplies by the search's schedule. A small search (the
job's rollouts, ``rehearse``, at the dry pace come to a few seconds) is also run once in full, for no job:
its span is then the wall-time estimate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from synth_nb.backend import display_url
from synth_nb.flows.search_mix import PromptSearch
from synth_nb.pipeline.dry_training import DryTraining
from synth_nb.pipeline.dry_training import at_least_0 as _at_least_0
from synth_nb.pipeline.dry_training import number as _number
from synth_nb.pipeline.target import Target
from synth_nb.plan import Plan, mask_payload, resolve_refs
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert

__all__ = ["DryProposal", "DryRollout", "DryTraining", "dry_rollout"]

#: loading a policy (an embedding model, RL's starting model) may take a while on a busy machine
TIMEOUT = 600.0
#: characters of each traced message shown on the card
SHOWN_CHARS = 400
#: bytes of one dataset sent with a dry training run (its first lines; the backend refuses more)
MAX_FILE_BYTES = 4 * 1024 * 1024
#: characters kept of the backend's reason for not rehearsing a search
MAX_NOTE = 200
#: a rehearsal shorter than this is timed by its CPU seconds (``DryProposal.rehearsed_seconds``)
BURST_S = 1.0


@dataclass(frozen=True)
class DryProposal:
    """One proposal of the job, made by its own proposer from a batch of baseline rollouts, and scored."""

    proposer: str
    seeds: int
    #: tokens one rollout used with the baseline prompt, and with the proposed one (same seeds)
    baseline_tokens: float
    proposed_tokens: float
    baseline_score: float | None
    proposed_score: float | None
    #: characters of the rewritten message before and after, and of one MIPRO demo
    chars_before: int
    chars_after: int
    demo_chars: float | None
    #: tokens of the proposer model's calls for this proposal (0 for the offline proposer)
    proposer_tokens: int
    #: rollouts of the warm batch (the baseline again, on seeds already seen) and its seconds: the pace of
    #: most of a search's rollouts
    warm_rollouts: int
    warm_seconds: float
    #: seconds the proposal's own batch took (a new prompt's first rollouts), its rollouts, and the proposal
    proposed_seconds: float
    proposed_rollouts: int
    propose_seconds: float
    #: the configured proposer model failed and the offline rewrite was used, as the job would
    fell_back: bool = False
    #: the baseline's score over all the seeds it was scored on (the share of rollouts it gets right)
    pool_score: float | None = None
    #: a second proposal, made once the policy and proposer were warm: its batch's rollouts and seconds, and
    #: its writing's seconds (0 rollouts: none was made, it wrote the same text)
    again_rollouts: int = 0
    again_seconds: float = 0.0
    again_propose_seconds: float = 0.0
    #: the backend process's CPU seconds for the warm batches, the first proposal's batch and the second's
    #: (None: the backend did not say)
    warm_cpu_seconds: float | None = None
    proposed_cpu_seconds: float | None = None
    again_cpu_seconds: float | None = None
    #: the whole search run once by the check, when it is small (the backend's ``dry_search``): its seconds,
    #: or why it was not run or not finished
    rehearsal_seconds: float | None = None
    rehearsal_cpu_seconds: float | None = None
    rehearsal_tokens: int | None = None
    rehearsal_rollouts: int | None = None
    rehearsal_note: str = ""

    def rehearsed(self, planned: int) -> str:
        """The rehearsal in words: the whole search, with the rollouts that run counted (else the plan's)."""
        return f"the whole search ({self.rehearsal_rollouts or planned:,} rollouts) run once by this check"

    @property
    def rehearsed_seconds(self) -> float | None:
        """The job's wall time by its rehearsal: a run under ``BURST_S`` by its CPU seconds, a longer one by its
        wall seconds. Under a second, a run's wall time is how the machine's other work fell (on a two-core
        machine with two busy processes, the rehearsal, which follows a second of the check's own work, got
        about 0.8 of a core and the job right after it a whole one: 0.52 s and 0.41 s for the same 0.41 s of
        CPU); its CPU work is the same in both. A longer run shares the machine as the job will."""
        if self.rehearsal_seconds is None:
            return None
        if self.rehearsal_cpu_seconds and self.rehearsal_seconds < BURST_S:
            return self.rehearsal_cpu_seconds
        return self.rehearsal_seconds

    @property
    def pace(self) -> float:
        """Seconds per rollout of the warm batch."""
        return self.warm_seconds / self.warm_rollouts if self.warm_rollouts else 0.0

    @property
    def wall_per_cpu(self) -> float | None:
        """Wall seconds per CPU second of the warm batches (0.3 s of them, or 40 batches): what a CPU second of the
        backend's rollouts takes on this machine now, over a span long enough to smooth the machine's bursts."""
        if not self.warm_cpu_seconds or not self.warm_seconds:
            return None
        return self.warm_seconds / self.warm_cpu_seconds

    def _beyond_pace(self, seconds: float, cpu: float | None, rollouts: int) -> float:
        """What one batch took beyond the warm pace: its CPU seconds beyond the warm batches' per rollout, at
        their wall seconds per CPU second (a batch of a few hundredths of a second is one of the machine's
        bursts or not; its CPU work is not), else its wall seconds beyond the pace."""
        factor = self.wall_per_cpu
        if cpu is None or factor is None or not self.warm_rollouts:
            return max(0.0, seconds - rollouts * self.pace)
        return max(0.0, cpu - rollouts * (self.warm_cpu_seconds or 0.0) / self.warm_rollouts) * factor

    @property
    def new_text_seconds(self) -> float:
        """Seconds the first proposal's batch took beyond the warm pace: a prompt whose text the policy has
        not seen (the offline policy embeds its new phrases on first sight)."""
        return self._beyond_pace(self.proposed_seconds, self.proposed_cpu_seconds, self.proposed_rollouts)

    @property
    def first_proposal_seconds(self) -> float:
        """Seconds the dry run's first proposal added: writing it, and its first batch beyond the warm pace."""
        return self.propose_seconds + self.new_text_seconds

    @property
    def writing_seconds(self) -> float:
        """Seconds the proposer takes to write one proposal: the second (warm) dry one's, else the first's."""
        return self.again_propose_seconds if self.again_rollouts else self.propose_seconds

    @property
    def new_prompt_seconds(self) -> float:
        """Seconds a prompt's first batch takes beyond the warm pace: the second (warm) dry proposal's (with
        a MIPRO job's demos), else the first's."""
        if not self.again_rollouts:
            return self.new_text_seconds
        return self._beyond_pace(self.again_seconds, self.again_cpu_seconds, self.again_rollouts)

    @property
    def proposal_seconds(self) -> float:
        """Seconds one of the job's proposals adds: writing it and its first batch beyond the warm pace."""
        return self.writing_seconds + self.new_prompt_seconds

    @property
    def added_tokens(self) -> float:
        """Tokens one proposal adds to a rollout."""
        return max(0.0, self.proposed_tokens - self.baseline_tokens)

    @property
    def improved(self) -> bool:
        """The proposal scored better than the baseline on its seeds (how the search accepts one)."""
        return None not in (self.proposed_score, self.baseline_score) and \
            float(self.proposed_score or 0) > float(self.baseline_score or 0)

    @property
    def tokens_per_char(self) -> float:
        """Tokens per character of the rewritten text, as the policy counted them (else about 1/4)."""
        grown = self.chars_after - self.chars_before
        return self.added_tokens / grown if grown > 0 and self.added_tokens > 0 else 0.25

    def line(self) -> str:
        scores = (f"; score on them {self.baseline_score:g} -> {self.proposed_score:g}"
                  if self.baseline_score is not None and self.proposed_score is not None else "")
        model = f", {self.proposer_tokens:,} proposer tokens" if self.proposer_tokens else ""
        if self.fell_back:
            model += " (the proposer model's call failed: the offline rewrite was used, as the job would)"
        return (f"dry proposal: the {self.proposer} proposer rewrote the prompt from {self.seeds} rollouts: "
                f"{self.chars_before:,} -> {self.chars_after:,} characters, {self.baseline_tokens:,.0f} -> "
                f"{self.proposed_tokens:,.0f} tokens per rollout{scores}{model}")

    @classmethod
    def parse(cls, doc: Any) -> DryProposal | None:
        """The backend's ``proposal`` answer, or None when it is missing or not of that shape."""
        if not isinstance(doc, dict):
            return None
        before, after, warm = doc.get("baseline"), doc.get("proposed"), doc.get("warm")
        again: dict[str, Any] = doc["again"] if isinstance(doc.get("again"), dict) else {}
        if not isinstance(before, dict) or not isinstance(after, dict) or not isinstance(warm, dict):
            return None
        figures = [_number(before.get("tokens_per_rollout")), _number(after.get("tokens_per_rollout")),
                   _number(doc.get("chars_before")), _number(doc.get("chars_after"))]
        if None in figures:
            return None
        return cls(proposer="offline" if doc.get("proposer") == "offline" else "configured", seeds=int(_number(doc.get("seeds")) or 0),
                   baseline_tokens=figures[0] or 0.0, proposed_tokens=figures[1] or 0.0,
                   baseline_score=_number(before.get("score")), proposed_score=_number(after.get("score")),
                   chars_before=int(figures[2] or 0), chars_after=int(figures[3] or 0),
                   demo_chars=_number(doc.get("demo_chars")),
                   proposer_tokens=int(_number(doc.get("proposer_tokens")) or 0),
                   warm_rollouts=int(_number(warm.get("rollouts")) or 0), warm_seconds=_number(warm.get("seconds")) or 0.0,
                   proposed_seconds=_number(after.get("seconds")) or 0.0,
                   proposed_rollouts=int(_number(after.get("rollouts")) or 0),
                   propose_seconds=_number(doc.get("propose_seconds")) or 0.0,
                   fell_back=bool(_number(doc.get("proposer_fallbacks"))),
                   pool_score=_number(before.get("pool_score")),
                   again_rollouts=int(_number(again.get("rollouts")) or 0),
                   again_seconds=_number(again.get("seconds")) or 0.0,
                   again_propose_seconds=_number(again.get("propose_seconds")) or 0.0,
                   warm_cpu_seconds=_at_least_0(warm.get("cpu_seconds")),
                   proposed_cpu_seconds=_at_least_0(after.get("cpu_seconds")),
                   again_cpu_seconds=_at_least_0(again.get("cpu_seconds")), **_rehearsal(doc.get("rehearsal")))


def _rehearsal(doc: Any) -> dict[str, Any]:
    """The ``rehearsal`` answer as ``DryProposal`` fields: its seconds, or the backend's reason for none (one
    line of at most ``MAX_NOTE`` characters: the backend's text)."""
    if not isinstance(doc, dict):
        return {}
    seconds = _at_least_0(doc.get("seconds"))
    if seconds is not None and seconds > 0:
        tokens, rollouts = _at_least_0(doc.get("tokens")), _at_least_0(doc.get("rollouts"))
        return {"rehearsal_seconds": seconds, "rehearsal_cpu_seconds": _at_least_0(doc.get("cpu_seconds")),
                "rehearsal_tokens": None if tokens is None else int(tokens),
                "rehearsal_rollouts": None if rollouts is None else int(rollouts)}
    note = next((doc[k] for k in ("skipped", "stopped") if isinstance(doc.get(k), str)), "")
    return {"rehearsal_note": inert(" ".join(note.split()))[:MAX_NOTE]}


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
    #: the dry proposal, when one was asked for and the backend made it
    proposal: DryProposal | None = None
    #: the dry training run (SFT, RL), when one was asked for and the backend ran it, or why it did not
    training: DryTraining | None = None
    training_problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.offered and self.problem is None and (self.reward is not None or self.training is not None)

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
            return [f"dry {'rollout' if self.seed is not None or self.training is None else 'training'}: "
                    f"{self.problem}"]
        if self.reward is None and self.training is not None:
            return [self.training.line()]
        where = f"seed {self.seed}" + (f" ({self.split} split)" if self.split else "")
        policy = self.policy.get("model") or self.policy.get("policy") or "the configured policy"
        out = [f"dry rollout: {where} through the task app with {policy}: reward {self.reward:g} "
               f"in {self.latency_ms:.0f} ms"]
        for number, call in enumerate(self.trace, start=1):
            for message in call.get("messages") or []:
                out.append(f"  call {number} sent [{message.get('role')}]: {_shown(message.get('content'))}")
            out.append(f"  call {number} reply: {_reply(call.get('response') or {})}  "
                       f"({call.get('latency_ms', 0):.0f} ms)")
        if self.proposal is not None:
            out.append(self.proposal.line())
        if self.training is not None:
            out.append(self.training.line())
        elif self.training_problem is not None:
            out.append(f"dry training: {self.training_problem}")
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


def _files(plan: Plan) -> dict[str, str]:
    """The plan's uploads as the dry training run gets them: text by the id the body names them with (the
    first ``limit_lines`` lines when the plan sends only those), each at most ``MAX_FILE_BYTES``."""
    out: dict[str, str] = {}
    for step in plan.steps:
        if step.kind != "upload" or step.upload is None or step.ref is None:
            continue
        try:
            lines = [line for line in step.upload.read_text(encoding="utf-8", errors="replace").splitlines(
                keepends=True) if line.strip()]
        except OSError:
            continue
        limit = (step.body or {}).get("limit_lines") if isinstance(step.body, dict) else None
        kept, size = [], 0
        for line in lines[:int(limit)] if limit is not None else lines:
            size += len(line.encode())
            if size > MAX_FILE_BYTES:
                break
            kept.append(line)
        out[f"dry-{step.ref}"] = "".join(kept)
    return out


def dry_rollout(plan: Plan, target: Target, api_key: str, *, seed: int | None, split: str | None = None,
                proposal: PromptSearch | None = None, rehearse: int | None = None, training: bool = False,
                timeout: float = TIMEOUT,
                transport: httpx.BaseTransport | None = None) -> DryRollout:
    """Ask ``target`` for one rollout of ``plan``'s job at ``seed`` (and one proposal of its ``proposal``
    search, with ``rehearse`` (the job's rollouts) the whole search once if it is small, and with ``training``
    a few of its real training steps, timed); never raises for what the backend says."""
    secrets = tuple(s.get_secret_value() for s in plan.secrets if s.get_secret_value()) + (api_key,)
    if not target.started:
        return DryRollout(False, problem="the embedded backend is not running, so it cannot run one")
    files = _files(plan) if training else {}
    refs = {step.ref: f"dry-{step.ref}" for step in plan.steps if step.ref is not None}
    body = resolve_refs(plan.create_step.body, refs)
    request: dict[str, Any] = {"kind": plan.flow, "body": body, "seed": seed or 0, "split": split}
    if proposal is not None and proposal.seeds:
        request["proposal"] = {"seeds": list(proposal.seeds), "minibatch": proposal.minibatch,
                               "concurrency": proposal.concurrency, "demos": proposal.demos,
                               **({"rehearse": rehearse} if rehearse else {})}
    if training:
        request.update(training=True, files=files)
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
    problem = f"the rollout failed: {doc['error']}" if doc.get("error") else None
    trained = doc.get("training")
    training_problem = (f"the dry training run failed: {trained['error']}" if isinstance(trained, dict)
                        and isinstance(trained.get("error"), str) else None)
    if plan.flow == "sft" and problem is None and training_problem is not None:
        problem, training_problem = training_problem, None
    return DryRollout(True, seed=doc.get("seed"), split=doc.get("split"), reward=doc.get("reward"),
                      latency_ms=doc.get("latency_ms"), trace=list(doc.get("trace") or []),
                      policy=dict(doc.get("policy") or {}),
                      problem=problem,
                      proposal=DryProposal.parse(doc.get("proposal")), training=DryTraining.parse(trained),
                      training_problem=training_problem)

