"""Executors used by the tests in place of the real ones (plugged in through ``EXECUTORS``)."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.base import JobContext

#: released by tests to let ``Blocking`` jobs finish
RELEASE = threading.Event()


class Boom:
    name = "boom"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        if body.get("reject"):
            raise ExecutorInputError(f"reject was set (task_app_api_key={body.get('task_app_api_key')})")

    def run(self, ctx: JobContext) -> None:
        key = ctx.body.get("task_app_api_key", "")
        ctx.emit("boom.before", f"about to fail with {key}", {"nested": {"echo": key}})
        raise RuntimeError(f"deliberate executor failure (key {key})")


class Blocking:
    """Serves a policy, reports progress, and waits for cancellation (or RELEASE)."""

    name = "blocking"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        return None

    def run(self, ctx: JobContext) -> None:
        def policy(request: dict[str, Any]) -> dict[str, Any]:
            if "messages" not in request:
                raise ValueError("messages is required")
            text = request["messages"][-1]["content"]
            return {"object": "chat.completion", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": f"echo: {text}"}, "finish_reason": "stop"}]}

        url = ctx.serve_policy(policy)
        ctx.update_result(policy_url=url, env_key_seen=ctx.environment_api_key is not None,
                          backend_url=ctx.backend_url)
        ctx.emit("blocking.ready", "policy served", {"inference_url": url})
        step = 0
        while not ctx.cancelled.wait(0.02):
            if RELEASE.is_set():
                return
            step += 1
            if step <= 3:
                ctx.metric("progress", step, float(step))


class Stubborn:
    """Ignores cancellation until RELEASE (exercises the cancel grace period)."""

    name = "stubborn"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        return None

    def run(self, ctx: JobContext) -> None:
        RELEASE.wait(10)
        ctx.emit("stubborn.late", "this write comes after the job was finalised")


class NonFinite:
    """Reports a diverging loss and NaN-laden data."""

    name = "non_finite"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        return None

    def run(self, ctx: JobContext) -> None:
        ctx.metric("train.loss", 1, 1.5)
        ctx.metric("train.loss", 2, float("nan"))
        ctx.metric("train.loss", 3, float("inf"))
        ctx.emit("sft.progress", "diverged", {"loss": float("nan"), "grad": [float("-inf"), 1.0]})
        ctx.update_result(best_score=float("nan"))


class KeyProbe:
    """Reports (as a digest) which task-app key its job body carried when it ran."""

    name = "key_probe"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        return None

    def run(self, ctx: JobContext) -> None:
        key = ctx.body.get("metadata", {}).get("task_app_api_key")
        ctx.update_result(key_digest=hashlib.sha256(key.encode()).hexdigest() if key else None,
                          env_key_seen=ctx.environment_api_key is not None)
