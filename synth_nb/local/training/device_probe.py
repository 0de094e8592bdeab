"""Which device each training flow's worker would use on this machine, asked once and remembered.

The pre-flight card shows it (``GET /local-backend?device=1``). Finding out needs torch, whose import costs
about 1.3 s of CPU (1.4 s to 10 s of wall time on a shared 2-core machine, ``benchmarks/device_probe.py``) and
a few hundred MB: far too much for the backend's start or for the cheap ``/local-backend`` answer a kernel
asks for, and the backend process stays torch-free. So the first card that asks runs ``python -m synth_nb.local.training.device`` in a training
worker's own environment (the same ``SYNTH_NB_DEVICE``, the same interpreter), and later cards reuse the answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from synth_nb.local.training.process import worker_environment

__all__ = ["training_devices"]

#: torch's import on a loaded machine, with room to spare; the card says "unknown" past it
PROBE_TIMEOUT_S = 120.0

_lock = threading.Lock()
_known: dict[str, Any] | None = None


def _probe() -> dict[str, Any]:
    try:
        done = subprocess.run([sys.executable, "-m", "synth_nb.local.training.device"], capture_output=True,
                              text=True, encoding="utf-8", env=worker_environment(1), timeout=PROBE_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"the device probe did not finish: {type(exc).__name__}"}
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {"error": f"the device probe failed (exit {done.returncode}): {tail}"}
    return answer


def training_devices() -> dict[str, Any]:
    """``{flow: {"device", "dtype", "device_name"}}``, or ``{"error": ...}``; probed until it answers once."""
    global _known
    with _lock:
        if _known is not None:
            return _known
        answer = _probe()
        if "error" not in answer:  # a failed probe (a timeout on a busy machine) is asked again next time
            _known = answer
        return answer
