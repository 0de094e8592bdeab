"""Constants and helpers shared by the local-backend tests (a module name unique across the suite)."""

from __future__ import annotations

import time
from typing import Any

import httpx

from synth_nb.local.lifecycle import TERMINAL

API_KEY = "sk_local_test_canary_5f2c9d"
ENV_KEY = "sk_env_test_canary_77aa01"
#: ``python -c RUN_CLI --port 0 …`` runs ``synth-nb backend`` alone (without the other sub-commands' imports)
RUN_CLI = ("import argparse, sys; from synth_nb.cli import backend; p = argparse.ArgumentParser(); "
           "backend.configure(p); sys.exit(backend.run(p.parse_args(sys.argv[1:])))")


def wait_terminal(client: httpx.Client, path: str, timeout: float = 20.0) -> dict[str, Any]:
    """Poll ``path`` until the job's status is terminal; returns the status document."""
    deadline = time.monotonic() + timeout
    while True:
        doc: dict[str, Any] = client.get(path).json()
        if doc["status"] in TERMINAL or time.monotonic() > deadline:
            return doc
        time.sleep(0.05)


def replay_body(recording: str = "sft", speed: float | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"local_executor": "replay", "recording": recording}
    if speed is not None:
        meta["replay_speed"] = speed
    return {"metadata": meta, **extra}
