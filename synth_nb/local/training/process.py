"""The backend's side of a training worker: start it, relay its messages, serve its policy, stop it.

Torch-free on purpose: it runs inside the backend process. The worker is a plain subprocess
(``python -m synth_nb.local.training.worker``) with capped CPU threads and offline Hugging Face settings;
its memory is measured from /proc and it is killed when it exceeds the limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any

from synth_nb.local.errors import WorkerFailed
from synth_nb.local.executors.base import JobContext, PolicyHandler

__all__ = ["TrainingWorker", "worker_environment"]

_PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def worker_environment(threads: int) -> dict[str, str]:
    """The environment of a training worker process: capped CPU threads, offline Hugging Face settings."""
    env = dict(os.environ)
    threads_text = str(threads)
    env.update({"OMP_NUM_THREADS": threads_text, "MKL_NUM_THREADS": threads_text,
                "OPENBLAS_NUM_THREADS": threads_text, "OMP_WAIT_POLICY": "PASSIVE",
                "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


class _Waiter:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None
        self.error: str | None = None


class TrainingWorker:
    """One worker process for one job; ``run()`` blocks until it ends and returns its final status."""

    def __init__(self, ctx: JobContext, entry: str, config: dict[str, Any], *, policy_slots: int = 0,
                 memory_limit_mb: float = 4096.0, cancel_grace_s: float = 5.0,
                 chat_timeout_s: float = 120.0) -> None:
        self.ctx = ctx
        self.entry = entry
        self.config = dict(config)
        self.policy_slots = policy_slots
        self.memory_limit_mb = memory_limit_mb
        self.cancel_grace_s = cancel_grace_s
        self.chat_timeout_s = chat_timeout_s
        self.peak_rss_mb = 0.0
        self.log_path = Path(ctx.work_dir) / "worker.log"
        self._pending: dict[str, _Waiter] = {}
        self._write_lock = threading.Lock()
        self._final: dict[str, Any] | None = None
        self._alive = False
        self._proc: subprocess.Popen[str] | None = None

    # -- policy serving (called from backend threads) ---------------------------------------------------
    def _handler(self, slot: int) -> PolicyHandler:
        def handle(request: dict[str, Any]) -> dict[str, Any]:
            if not self._alive:
                raise RuntimeError("the training worker is not running")
            request_id = uuid.uuid4().hex
            waiter = self._pending[request_id] = _Waiter()
            try:
                self._write({"op": "chat", "id": request_id, "slot": slot, "request": request})
                if not waiter.done.wait(self.chat_timeout_s):
                    raise TimeoutError(f"the policy did not answer within {self.chat_timeout_s:.0f} s")
            finally:
                self._pending.pop(request_id, None)
            if waiter.error or waiter.response is None:
                raise RuntimeError(waiter.error or "the policy returned nothing")
            return waiter.response

        return handle

    def _write(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise RuntimeError("the training worker is not running")
        with self._write_lock:
            try:
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise RuntimeError("the training worker has stopped") from exc

    # -- messages from the worker --------------------------------------------------------------------
    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            op = msg.get("op")
            if op == "event":
                self.ctx.emit(msg["type"], msg.get("message", ""), msg.get("data") or {}, msg.get("level", "info"))
            elif op == "metric":
                self.ctx.metric(msg["name"], msg["step"], msg["value"], msg.get("data") or {})
            elif op == "result":
                self.ctx.update_result(**msg.get("fields", {}))
            elif op == "chat_response":
                waiter = self._pending.get(msg.get("id", ""))
                if waiter is not None:
                    waiter.response, waiter.error = msg.get("response"), msg.get("error")
                    waiter.done.set()
            elif op == "memory":
                self.peak_rss_mb = max(self.peak_rss_mb, float(msg.get("peak_rss_mb") or 0.0))
            elif op in ("done", "failed"):
                self._final = msg

    def _environment(self) -> dict[str, str]:
        return worker_environment(int(self.config.get("threads", 2)))

    def _log_tail(self, lines: int = 12) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- lifecycle -------------------------------------------------------------------------------------
    def run(self) -> str:
        """Run the worker to the end; returns "succeeded" or "cancelled", raises WorkerFailed otherwise."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.config["policy_urls"] = [self.ctx.serve_policy(self._handler(i)) for i in range(self.policy_slots)]
        with open(self.log_path, "w", encoding="utf-8") as log:
            self._proc = proc = subprocess.Popen(
                [sys.executable, "-m", "synth_nb.local.training.worker"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, encoding="utf-8", env=self._environment(),
                cwd=str(self.ctx.work_dir))
            self._alive = True
            assert proc.stdout is not None
            pump = threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True, name="worker-pump")
            pump.start()
            self._write({"entry": self.entry, "config": self.config})
            outcome = self._supervise(proc)
            pump.join(timeout=5)
            self._alive = False
            for waiter in list(self._pending.values()):
                waiter.error = "the training worker has stopped"
                waiter.done.set()
        return self._conclude(proc, outcome)

    def _supervise(self, proc: subprocess.Popen[str]) -> str:
        cancel_deadline: float | None = None
        while proc.poll() is None:
            rss = _rss_mb(proc.pid)
            if rss is not None:
                self.peak_rss_mb = max(self.peak_rss_mb, rss)
                if rss > self.memory_limit_mb:
                    proc.kill()
                    proc.wait()
                    return "memory"
            if self.ctx.cancelled.is_set() and cancel_deadline is None:
                cancel_deadline = time.monotonic() + self.cancel_grace_s
                with contextlib.suppress(RuntimeError):
                    self._write({"op": "cancel"})
            if cancel_deadline is not None and time.monotonic() > cancel_deadline:
                proc.kill()
                proc.wait()
                return "killed"
            time.sleep(0.1)
        return "exited"

    def _conclude(self, proc: subprocess.Popen[str], outcome: str) -> str:
        if outcome == "memory":
            raise WorkerFailed(f"the training worker used more than {self.memory_limit_mb:.0f} MB and was "
                               "stopped; lower batch_size or sequence_length", self._log_tail())
        final = self._final or {}
        if final.get("op") == "done":
            return str(final.get("status") or "succeeded")
        if final.get("op") == "failed":
            raise WorkerFailed(str(final.get("error") or "training failed"), str(final.get("traceback") or ""))
        if outcome == "killed" or self.ctx.cancelled.is_set():
            return "cancelled"
        code = proc.returncode
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        raise WorkerFailed(f"the training worker {how} without reporting a result", self._log_tail())
