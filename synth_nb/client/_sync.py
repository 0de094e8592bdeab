"""``SynthClient``: the async client for plain scripts, run on a private event loop in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx

from synth_nb.client._client import AsyncSynthClient
from synth_nb.contract import FlowEndpoints
from synth_nb.records import Event, MetricPoint

__all__ = ["SynthClient"]

T = TypeVar("T")


class SynthClient:
    """Blocking facade: same methods as ``AsyncSynthClient``; safe to call from a notebook cell too."""

    def __init__(self, base_url: str, api_key: str, *, transport: httpx.AsyncBaseTransport | None = None,
                 timeout: float = 30.0, max_attempts: int = 6) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="synth-nb-client", daemon=True)
        self._thread.start()
        self._async = self._call(self._make(base_url, api_key, transport, timeout, max_attempts))

    @staticmethod
    async def _make(base_url: str, api_key: str, transport: httpx.AsyncBaseTransport | None,
                    timeout: float, max_attempts: int) -> AsyncSynthClient:
        return AsyncSynthClient(base_url, api_key, transport=transport, timeout=timeout, max_attempts=max_attempts)

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __repr__(self) -> str:
        return f"SynthClient({self._async!r})"

    def __enter__(self) -> SynthClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return self._async.base_url

    @property
    def async_client(self) -> AsyncSynthClient:
        return self._async

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._call(self._async.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run any coroutine (e.g. ``submit(plan, client.async_client)``) on the client's loop."""
        return self._call(coro)

    def request_json(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None,
                     headers: dict[str, str] | None = None, idempotency_key: str | None = None) -> Any:
        return self._call(self._async.request_json(method, path, json, params=params, headers=headers,
                                                   idempotency_key=idempotency_key))

    def upload_file(self, path: str | Path, purpose: str = "fine-tune", limit_lines: int | None = None) -> dict[str, Any]:
        return self._call(self._async.upload_file(path, purpose, limit_lines))

    def get_status(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        return self._call(self._async.get_status(endpoints, job_id))

    def get_events(self, endpoints: FlowEndpoints, job_id: str, since_seq: int = 0, limit: int = 200) -> list[Event]:
        return self._call(self._async.get_events(endpoints, job_id, since_seq, limit))

    def get_metrics(self, endpoints: FlowEndpoints, job_id: str, *, after_step: int | None = None,
                    limit: int = 1000) -> list[MetricPoint]:
        return self._call(self._async.get_metrics(endpoints, job_id, after_step=after_step, limit=limit))

    def get_timeline(self, endpoints: FlowEndpoints, job_id: str) -> list[Any]:
        return self._call(self._async.get_timeline(endpoints, job_id))

    def cancel(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        return self._call(self._async.cancel(endpoints, job_id))

    def create_job(self, endpoints: FlowEndpoints, body: Any, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._call(self._async.create_job(endpoints, body, idempotency_key=idempotency_key))
