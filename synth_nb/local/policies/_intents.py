"""Reading an intent-classification chat request, and answering it in OpenAI chat-completion form.

The offline policies are steered by the prompt text: the system message may carry an ``Intents:`` list
(``- label: phrase; phrase``) and few-shot lines (``Example: <query> => <label>``); each phrase, example
and the humanised label name becomes a prototype of that label. A better prompt therefore scores better.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IntentRequest", "chat_completion", "estimate_tokens", "humanize", "parse_intent_request"]

_LABEL = r"[A-Za-z][A-Za-z0-9_]*"
_DESCRIBED = re.compile(rf"^\s*[-*]\s*({_LABEL})\s*:\s*(.+?)\s*$")
_LISTED = re.compile(rf"^\s*(?:[-*]|\d+[.)])\s*({_LABEL})\s*$")
_EXAMPLE = re.compile(rf"^\s*Example:\s*(.+?)\s*=>\s*({_LABEL})\s*$", re.IGNORECASE)
_QUERY = re.compile(r"Customer Query:\s*(.+?)(?:\n\s*\n|$)", re.DOTALL)


def humanize(label: str) -> str:
    return label.replace("_", " ").strip()


def estimate_tokens(text: str) -> int:
    """About four characters per token: enough for local usage figures."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class IntentRequest:
    """What a classifier needs from a chat request: the query, the label set and each label's prototypes."""

    query: str
    labels: list[str]
    prototypes: dict[str, list[str]] = field(default_factory=dict)
    tool_name: str | None = None
    prompt_tokens: int = 0


def _tool(request: dict[str, Any]) -> tuple[str | None, list[str]]:
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            continue
        props = ((function.get("parameters") or {}).get("properties") or {})
        enum = (props.get("intent") or {}).get("enum") if isinstance(props, dict) else None
        return function.get("name"), [str(x) for x in enum] if isinstance(enum, list) else []
    return None, []


@functools.lru_cache(maxsize=512)
def _prototypes(system_texts: tuple[str, ...], labels: tuple[str, ...]) -> dict[str, list[str]]:
    """Each label's prototypes from the system messages; cached, as every rollout of a candidate repeats
    them (read-only: callers share the result)."""
    described: dict[str, list[str]] = {}
    for text in system_texts:
        for line in text.splitlines():
            if m := _EXAMPLE.match(line):
                described.setdefault(m.group(2), []).append(m.group(1).strip().strip('"'))
            elif m := _DESCRIBED.match(line):
                phrases = [p.strip().strip('"') for p in m.group(2).split(";")]
                described.setdefault(m.group(1), []).extend(p for p in phrases if p)
    return {label: [humanize(label), *described.get(label, [])] for label in (labels or described)}


def parse_intent_request(request: dict[str, Any]) -> IntentRequest:
    """Extract query, labels (tool enum › ``Available Intents`` list › described labels) and prototypes."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    texts: list[tuple[Any, str]] = [(m.get("role"), c if isinstance(c := m.get("content"), str) else "")
                                    for m in messages]
    tool_name, labels = _tool(request)
    user_texts = [t for role, t in texts if role == "user"]
    last_user = user_texts[-1] if user_texts else ""
    match = _QUERY.search(last_user)
    query = match.group(1).strip() if match else last_user.strip()
    if not labels:
        labels = [m.group(1) for line in last_user.splitlines() if (m := _LISTED.match(line))]
    prototypes = _prototypes(tuple(t for role, t in texts if role in ("system", "developer")), tuple(labels))
    return IntentRequest(query=query, labels=list(prototypes), prototypes=prototypes, tool_name=tool_name,
                         prompt_tokens=sum(estimate_tokens(t) for _, t in texts))


def _token(bits: int) -> str:
    """A random hex id; not ``uuid4``, whose ``os.urandom`` drops the GIL on every call of the rollout path."""
    return f"{random.getrandbits(bits):0{bits // 4}x}"


def chat_completion(request: dict[str, Any], parsed: IntentRequest, label: str | None, *, model: str) -> dict[str, Any]:
    """An OpenAI chat.completion answering with a tool call when tools were offered, else plain text."""
    text = label or ""
    message: dict[str, Any] = {"role": "assistant", "content": None if parsed.tool_name else text}
    if parsed.tool_name:
        message["tool_calls"] = [{"id": f"call_{_token(48)}", "type": "function",
                                  "function": {"name": parsed.tool_name, "arguments": json.dumps({"intent": text})}}]
    completion_tokens = estimate_tokens(text) + (8 if parsed.tool_name else 0)
    return {
        "id": f"chatcmpl-{_token(64)}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if parsed.tool_name else "stop"}],
        "usage": {"prompt_tokens": parsed.prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": parsed.prompt_tokens + completion_tokens},
    }
