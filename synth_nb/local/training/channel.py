"""The worker's side of its pipe to the backend: what the training loops use to report and to serve the policy.

JSON lines on the worker's original stdout (``event``, ``metric``, ``result``, ``chat_response``,
``memory``); ``cancel`` and ``chat`` requests arrive on stdin. Kept apart from ``worker`` (the process
entry point) so the loops can import it without importing the entry point.
"""

from __future__ import annotations

import json
import queue
import resource
import sys
import threading
from typing import IO, Any

__all__ = ["Channel", "peak_rss_mb"]


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class Channel:
    """Reports to the backend and receives its cancel and chat requests (a reader thread fills them in)."""

    def __init__(self, out: IO[str], inp: IO[str]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self.cancelled = threading.Event()
        self.chat_requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(inp,), daemon=True, name="worker-stdin")
        self._reader.start()

    def _read(self, inp: IO[str]) -> None:
        for line in inp:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if msg.get("op") == "cancel":
                self.cancelled.set()
            elif msg.get("op") == "chat":
                self.chat_requests.put(msg)
        self.cancelled.set()  # parent went away: stop as if cancelled

    def send(self, op: str, **fields: Any) -> None:
        line = json.dumps({"op": op, **fields}, default=str)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None,
             level: str = "info") -> None:
        self.send("event", type=type, message=message, data=data or {}, level=level)

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        self.send("metric", name=name, step=int(step), value=float(value), data=data or {})

    def result(self, **fields: Any) -> None:
        self.send("result", fields=fields)

    def respond(self, request_id: str, response: dict[str, Any] | None = None, error: str | None = None) -> None:
        self.send("chat_response", id=request_id, response=response, error=error)

    def report_memory(self) -> float:
        peak = peak_rss_mb()
        self.send("memory", peak_rss_mb=round(peak, 1))
        return peak
