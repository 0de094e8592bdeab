"""Shared by the benchmarks: drive jobs on a real embedded local backend over HTTP, in this process or
in a process of its own (its own GIL, so the client measured here does not share it)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

TERMINAL = {"succeeded", "failed", "cancelled", "error"}


class Backend:
    """An embedded backend plus an authenticated client for its ``/api`` routes."""

    def __init__(self, **options: Any) -> None:
        from synth_nb.local import start_backend

        self.backend = start_backend(**options)
        self.http = httpx.Client(base_url=self.backend.url + "/api", timeout=60.0,
                                 headers={"Authorization": f"Bearer {self.backend.api_key}"})

    def upload(self, path: Path) -> str:
        with open(path, "rb") as fh:
            response = self.http.post("/files", files={"file": (path.name, fh, "application/jsonl")},
                                      data={"purpose": "fine-tune"})
        response.raise_for_status()
        return str(response.json()["id"])

    def create(self, path: str, body: dict[str, Any], *, start: bool) -> str:
        response = self.http.post(path, json=body)
        response.raise_for_status()
        job_id = str(response.json().get("job_id") or response.json()["id"])
        if start:
            self.http.post(f"{path}/{job_id}/start").raise_for_status()
        return job_id

    def wait(self, path: str, job_id: str, *, timeout: float = 1800.0) -> tuple[dict[str, Any], float]:
        """Poll until terminal; returns (status document, worst /health latency seen meanwhile)."""
        deadline, worst = time.monotonic() + timeout, 0.0
        while time.monotonic() < deadline:
            started = time.perf_counter()
            self.http.get("/health").raise_for_status()
            worst = max(worst, time.perf_counter() - started)
            doc = self.http.get(f"{path}/{job_id}").json()
            if doc.get("status") in TERMINAL:
                return doc, worst
            time.sleep(0.5)
        raise TimeoutError(f"job {job_id} did not finish within {timeout:.0f} s")

    def metrics(self, path: str, job_id: str, name: str) -> list[tuple[int, float]]:
        points = self.http.get(f"{path}/{job_id}/metrics", params={"limit": 10000}).json()
        points = points.get("points", points) if isinstance(points, dict) else points
        return sorted((int(p["step"]), float(p["value"])) for p in points if p.get("name") == name)

    def events(self, path: str, job_id: str) -> list[dict[str, Any]]:
        data = self.http.get(f"{path}/{job_id}/events", params={"since_seq": 0, "limit": 10000}).json()
        return list(data.get("events", data) if isinstance(data, dict) else data)

    def close(self) -> None:
        self.http.close()
        self.backend.stop()


def start_backend_process(data_dir: Path, api_key: str, *, recordings: bool = False
                          ) -> tuple[subprocess.Popen[str], str]:
    """A local backend in a child process (stopped when its stdin closes) and its URL; ``recordings``: replay
    recordings are written beside ``data_dir``."""
    options = f"port=0, data_dir={str(data_dir)!r}, api_key={api_key!r}"
    if recordings:
        options += f", recordings_dir={str(data_dir.parent)!r}"
    code = (f"import sys\nfrom synth_nb.local import start_backend\nb = start_backend({options})\n"
            "print(b.url, flush=True)\nsys.stdin.read()\nb.stop()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("could not start the local backend")
    return proc, url


def stop_backend_process(proc: subprocess.Popen[str]) -> None:
    """Stop a backend from ``start_backend_process``: close its stdin, then kill it if it has not exited in 30 s."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
