"""The local prompt interceptor: one OpenAI-compatible route per candidate, served by the backend.

Task apps render their own baseline messages and post them to ``policy.config.inference_url``. The route
for a candidate swaps in the candidate's text for each rewritable message (recovering ``{wildcard}``
values by matching the baseline pattern against the rendered message), calls the policy, and counts
tokens. Messages that are not rewritable pass through untouched.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from synth_nb.local.executors.prompt_learning.settings import Message
from synth_nb.local.policies import Policy

__all__ = ["CandidateRouter", "Usage", "UsageCounts", "render_sections", "substitute_messages"]

_WILDCARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts, seen, last = [], set(), 0
    for m in _WILDCARD.finditer(pattern):
        parts.append(re.escape(pattern[last:m.start()]))
        name = m.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        last = m.end()
    parts.append(re.escape(pattern[last:]))
    return re.compile("^" + "".join(parts) + "$", re.DOTALL)


def _render(pattern: str, values: dict[str, str]) -> str:
    return _WILDCARD.sub(lambda m: values.get(m.group(1), m.group(0)), pattern)


def substitute_messages(messages: list[dict[str, Any]], baseline: list[Message],
                        candidate: dict[str, str]) -> list[dict[str, Any]]:
    """The request's messages with each rewritable one replaced by the candidate's text."""
    by_role: dict[str, list[Message]] = {}
    for msg in baseline:
        by_role.setdefault(msg.role, []).append(msg)
    seen: dict[str, int] = {}
    out = []
    for message in messages:
        role = message.get("role", "")
        k = seen.get(role, 0)
        seen[role] = k + 1
        slots = by_role.get(role, [])
        slot = slots[k] if k < len(slots) else None
        content = message.get("content")
        if slot is None or not slot.component or not isinstance(content, str):
            out.append(message)
            continue
        new_text = candidate.get(slot.component, slot.pattern)
        if new_text == slot.pattern:
            out.append(message)
            continue
        values: dict[str, str] = {}
        if slot.wildcards:
            match = _pattern_regex(slot.pattern).match(content)
            values = match.groupdict() if match else {}
        out.append({**message, "content": _render(new_text, values)})
    return out


def render_sections(baseline: list[Message], candidate: dict[str, str]) -> list[dict[str, str]]:
    """The ``best_prompt.sections`` shape 0.2.24 reads: role, name and the (pattern) content per message."""
    return [{"role": m.role, "name": m.component or f"{m.role}_{m.order}",
             "content": candidate.get(m.component, m.pattern) if m.component else m.pattern} for m in baseline]


class Usage:
    """Calls, tokens, latency and cost of one model, from each answer's ``usage`` (thread-safe).

    ``cost_usd`` stays None until a server reports ``usage.cost`` (some hosted routers do); the report
    decides what an unknown cost means (0.0 for models served on this machine).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.latency_seconds = 0.0
        self.latency_max = 0.0
        self.cost_usd: float | None = None

    def add(self, response: dict[str, Any], seconds: float) -> None:
        found = response.get("usage")
        usage: dict[str, Any] = found if isinstance(found, dict) else {}
        cost = usage.get("cost")
        with self.lock:
            self.calls += 1
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)
            self.latency_seconds += seconds
            self.latency_max = max(self.latency_max, seconds)
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                self.cost_usd = (self.cost_usd or 0.0) + float(cost)

    def summary(self, prefix: str) -> dict[str, Any]:
        """``<prefix>_calls``, mean/max latency in ms and completion tokens per second of model time."""
        with self.lock:
            calls, seconds, most, completion = self.calls, self.latency_seconds, self.latency_max, self.completion_tokens
        return {f"{prefix}_calls": calls,
                f"{prefix}_latency_ms_mean": round(1000 * seconds / calls, 1) if calls else None,
                f"{prefix}_latency_ms_max": round(1000 * most, 1) if calls else None,
                f"{prefix}_completion_tokens_per_second": round(completion / seconds, 1) if seconds > 0 else None}


class UsageCounts:
    """Token totals read off a ``usage`` (the policy's router and the proposer both count this way)."""

    usage: Usage

    @property
    def prompt_tokens(self) -> int:
        return self.usage.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.usage.completion_tokens


class CandidateRouter(UsageCounts):
    """Hands out one inference URL per distinct candidate (``serve_policy`` on the backend)."""

    def __init__(self, serve_policy: Callable[[Callable[[dict[str, Any]], dict[str, Any]]], str],
                 policy: Policy, baseline: list[Message]) -> None:
        self._serve = serve_policy
        self.policy = policy
        self.baseline = baseline
        self._urls: dict[str, str] = {}
        self._lock = threading.Lock()
        self.usage = Usage()
        self.errors = 0

    @property
    def calls(self) -> int:
        return self.usage.calls

    def url_for(self, candidate: dict[str, str]) -> str:
        key = json.dumps(candidate, sort_keys=True)
        with self._lock:
            url = self._urls.get(key)
        if url is None:
            url = self._serve(_CandidateHandler(self, dict(candidate)))
            with self._lock:
                url = self._urls.setdefault(key, url)
        return url

    def handle(self, request: dict[str, Any], candidate: dict[str, str],
                complete: Callable[[dict[str, Any]], dict[str, Any] | None]) -> dict[str, Any] | None:
        """``complete`` of the request with the candidate's messages, counted (None: it could not answer now)."""
        messages = request.get("messages")
        if isinstance(messages, list):
            request = {**request, "messages": substitute_messages(messages, self.baseline, candidate)}
        started = time.perf_counter()
        try:
            response = complete(request)
        except Exception:
            with self._lock:
                self.errors += 1
            raise
        if response is None:
            return None
        self.usage.add(response, time.perf_counter() - started)
        return response


class _CandidateHandler:
    """One candidate's policy route: ``handler(request)`` in a worker thread, or ``answer_now(request)``
    on the server's event loop when the policy can answer without blocking (None when it cannot)."""

    def __init__(self, router: CandidateRouter, candidate: dict[str, str]) -> None:
        self._router = router
        self._candidate = candidate
        self._now: Callable[[dict[str, Any]], dict[str, Any] | None] | None = getattr(
            router.policy, "complete_now", None)

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self._router.handle(request, self._candidate, self._router.policy.complete)
        assert response is not None
        return response

    def answer_now(self, request: dict[str, Any]) -> dict[str, Any] | None:
        return None if self._now is None else self._router.handle(request, self._candidate, self._now)
