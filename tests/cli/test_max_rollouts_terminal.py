"""The ``--max-rollouts`` journey in a real terminal: a GEPA job on the embedded backend stops at the limit
sent with it, and the final block's count is the job's own (issue: 50 asked, 162 run, 120 reported)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pexpect
from minimal_configs import LOCAL_GEPA

CLI = [sys.executable, "-m", "synth_nb"]
WAIT = 180  # generous: the machine may be loaded


def test_a_terminal_run_stops_at_max_rollouts_and_reports_the_jobs_own_count(
        folder: Path, backend: Any, task_app: Any, children: list[pexpect.spawn]) -> None:
    (folder / "pl.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=3000))
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL")}
    env.update(SYNTH_API_KEY=backend.api_key, TERM="xterm", COLUMNS="140", LINES="40", PYTHONUNBUFFERED="1")
    child = pexpect.spawn(CLI[0], [*CLI[1:], "train", "pl.toml", "--backend", backend.url, "--max-rollouts", "50"],
                          cwd=str(folder), env=env, encoding="utf-8", dimensions=(40, 140), timeout=WAIT)
    children.append(child)
    child.expect("Submit\\? \\[Y/n\\]")
    child.send("\r")
    child.expect("submitted prompt_learning job (pl_\\w+)")
    job_id = child.match.group(1)
    child.expect("Final status: (\\w+)")
    status = child.match.group(1)
    child.expect(re.escape("stopped by --max-rollouts 50: ") + "(\\d+)" + re.escape(
        " rollouts (limit 50); the backend ended the search at the limit (budget_exhausted)"))
    reported = int(child.match.group(1))
    child.expect(pexpect.EOF)
    rest = child.before
    child.close()
    assert child.exitstatus == 0 and status == "succeeded"
    assert "stopped by --max-rollouts" not in rest and "cancel" not in rest
    answer = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs/{job_id}/events",
                       headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30)
    answer.raise_for_status()
    body = answer.json()
    events = body.get("events", body) if isinstance(body, dict) else body
    completed = [e["data"] for e in events if e["type"] == "prompt.learning.completed"][-1]
    assert reported == completed["rollouts_completed"] <= 50
