"""The pre-flight card's device line: which device an SFT or RL job will train on, never invented.

The embedded backend knows its machine and says it (``GET /v1/local-backend?device=1``: per flow, the device
its training worker uses). The hosted backend chooses its own hardware and does not say before a job, so the
card says that instead of guessing. Only flows whose jobs train weights (``Flow.trains_weights``) get a line.
"""

from __future__ import annotations

import httpx

from synth_nb.pipeline.target import Target

__all__ = ["device_line"]

#: the first ask waits for the backend's probe of torch (seconds on a loaded machine); later asks are instant
DEVICE_TIMEOUT = 150.0
#: the most of the backend's words the line shows
SHOWN_CHARS = 160
EMBEDDED_MACHINE = "training runs on the embedded backend's machine"


def _shown(text: object) -> str:
    """The backend's text as one printable line of bounded length (it is input from outside)."""
    flat = "".join(c for c in " ".join(str(text).split()) if c.isprintable())
    return flat if len(flat) <= SHOWN_CHARS else flat[:SHOWN_CHARS] + " …"


def device_line(target: Target, api_key: str | None, flow: str, *, timeout: float = DEVICE_TIMEOUT,
                transport: httpx.BaseTransport | None = None) -> str:
    """``device: …`` for a job of ``flow`` sent to ``target``; never raises for what the backend does."""
    if not target.is_embedded:
        return "device: chosen by the hosted backend (it does not say before a job)"
    if not target.started or not api_key:
        return "device: not asked (the embedded backend is not running)"
    try:
        with httpx.Client(timeout=timeout, transport=transport, follow_redirects=False) as http:
            answer = http.get(f"{target.url.rstrip('/')}/v1/local-backend", params={"jobs": "0", "device": "1"},
                              headers={"Authorization": f"Bearer {api_key}"})
        doc = answer.json() if answer.is_success and len(answer.content) < 64_000 else None
    except (httpx.HTTPError, ValueError):
        doc = None
    devices = doc.get("training_device") if isinstance(doc, dict) else None
    if not isinstance(devices, dict):
        return "device: unknown (the embedded backend did not say)"
    if "error" in devices:
        return f"device: unknown ({_shown(devices['error'])})"
    mine = devices.get(flow)
    if not isinstance(mine, dict) or not mine.get("device_name"):
        return f"device: unknown (the embedded backend names none for {flow})"
    if not mine.get("device"):  # a SYNTH_NB_DEVICE this machine cannot honour: the reason, as the job would fail
        return f"device: none usable ({_shown(mine['device_name'])})"
    return f"device: {_shown(mine['device_name'])}, {_shown(mine.get('dtype'))} — {EMBEDDED_MACHINE}"
