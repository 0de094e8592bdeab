"""``%synth_train --max-rollouts N``: the limit travels with the job, the embedded backend stops at it, and
what the cell prints, the job's watchdog meter and the job's own event give one count (a real MIPRO job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from minimal_configs import BANKING_MIPRO, with_values

ENV_KEY = "sk_env_CANARY_magicbudget_dddddd_5151"


def test_the_magic_sends_the_limit_and_every_report_gives_the_jobs_own_count(
        ip: Any, folder: Path, backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")  # headless: the panel's text copy, no wizard
    (folder / "pl.toml").write_text(with_values(BANKING_MIPRO, task_app_url=task_app.url, num_iterations=50))
    job = ip.run_line_magic("synth_train", f"-c pl.toml --backend {backend.url} --yes --wait --max-rollouts 60")
    out = capsys.readouterr().out
    assert job.status == "succeeded", out
    completed = [e.data for e in job.events if e.type == "prompt.learning.completed"][-1]
    own = completed["rollouts_completed"]
    assert completed["finish_reason"] == "budget_exhausted" and 60 - 3 * 8 <= own <= 60
    meter = next(m for m in job.watchdog.meters() if m.name == "rollouts")
    assert meter.used == own
    assert f"job {job.id}: stopped by --max-rollouts 60: {own} rollouts (limit 60); the backend ended the " \
           "search at the limit (budget_exhausted)" in out, out
    assert f"rollouts: {own} of 60 used" in out and "cancel: " not in out and ENV_KEY not in out
