"""What the pre-flight card's device line costs the embedded backend: its start, and the first and later asks.

The backend itself never imports torch (its start stays as it was); the first ``GET /v1/local-backend?device=1``
waits for ``python -m synth_nb.local.training.device`` (torch's import), later asks reuse the answer.

Run: ``python benchmarks/device_probe.py``. Printed on a shared 2-core machine: backend start 0.06 s after its
import (torch not imported), first ask 1.4 s (10 s while the machine was loaded), second ask 19 ms.
"""

from __future__ import annotations

import sys
import time

import httpx

from synth_nb.local import start_backend


def main() -> None:
    started = time.perf_counter()
    with start_backend(port=0) as backend:
        print(f"backend start: {time.perf_counter() - started:.2f} s (torch imported: {'torch' in sys.modules})")
        headers = {"Authorization": f"Bearer {backend.api_key}"}
        for ask in ("first", "second"):
            t0 = time.perf_counter()
            answer = httpx.get(f"{backend.url}/api/v1/local-backend", params={"jobs": "0", "device": "1"},
                               headers=headers, timeout=300).json()
            print(f"{ask} ask: {(time.perf_counter() - t0) * 1000:.0f} ms -> {answer['training_device']}")


if __name__ == "__main__":
    main()
