"""``synth-nb task-app banking|charclass`` serves the named example until SIGTERM and never prints the full key."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import httpx
import pytest

KEY = "sk_env_cli_test_" + "z" * 16


@pytest.mark.parametrize(("name", "app_id", "config_hint"), [
    ("banking", "synth-nb-banking", "[prompt_learning]"),
    ("charclass", "synth-nb-charclass", "[services]"),
])
def test_task_app_command_serves_until_terminated(name: str, app_id: str, config_hint: str) -> None:
    env = {**os.environ, "ENVIRONMENT_API_KEY": KEY, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "synth_nb", "task-app", name, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        url = re.search(r"on (http://127\.0\.0\.1:\d+)", lines[0]).group(1)  # type: ignore[union-attr]
        assert "••••zzzz" in lines[1] and KEY not in "".join(lines)
        assert httpx.get(f"{url}/health", headers={"X-API-Key": KEY}, timeout=10).json()["healthy"] is True
        assert httpx.get(f"{url}/health", timeout=10).status_code == 401
        info = httpx.get(f"{url}/info", headers={"X-API-Key": KEY}, timeout=10).json()
        assert info["service"]["task"]["id"] == app_id
        assert config_hint in lines[2] and f"--task-url {url}" in lines[2]
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert KEY not in out + err


def test_unknown_example_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "synth_nb", "task-app", "crafter"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and "invalid choice" in result.stderr
