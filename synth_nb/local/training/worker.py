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
import sys
import traceback

from synth_nb.local.training.channel import Channel

__all__ = ["main"]


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
