"""Entry point of the training worker process: ``python -m synth_nb.local.training.worker``.

Protocol (JSON lines). The parent writes the job spec as the first stdin line
(``{"entry": "sft"|"rl", "config": {...}}``), then ``{"op": "cancel"}`` or policy requests
(``{"op": "chat", "id", "slot", "request"}``). The worker writes to its *original* stdout (library prints
are redirected to stderr): ``event``, ``metric``, ``result``, ``chat_response``, ``memory`` and finally
``done`` (``{"status": "succeeded"|"cancelled"}``) or ``failed`` (``{"error", "traceback"}``).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import sys
import threading
import traceback
from typing import IO, Any

__all__ = ["Channel", "main"]


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class Channel:
    """The worker's side of the pipe: what the training loops use to report and to serve the policy."""

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


def _configure_torch(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))
    with contextlib.suppress(RuntimeError):  # already set in this process
        torch.set_num_interop_threads(1)


def main() -> int:
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the protocol
    spec = json.loads(sys.stdin.readline() or "{}")
    channel = Channel(protocol_out, sys.stdin)
    try:
        config = spec["config"]
        _configure_torch(int(config.get("threads", 2)))
        if spec.get("entry") == "sft":
            from synth_nb.local.training.sft_loop import run_sft as entry
        elif spec.get("entry") == "rl":
            from synth_nb.local.training.grpo_loop import run_grpo as entry
        else:
            raise ValueError(f"unknown worker entry {spec.get('entry')!r}")
        status = entry(config, channel)
        channel.report_memory()
        channel.send("done", status=status)
        return 0
    except BaseException as exc:  # report everything, including KeyboardInterrupt, then exit non-zero
        channel.send("failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        return 1


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # do not wait for rollout threads still blocked on a task app after a cancel
