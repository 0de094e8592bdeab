"""The budget watchdog stops a job at the stated limit, says which one, and keeps what the backend reports.

(``--max-rollouts`` also travels in a prompt-learning job's body; ``test_rollout_budget`` has the embedded
backend stopping at it by itself. Here the watchdog is the backstop, for a job whose body lacks it.)

Real jobs on the embedded backend: a GEPA search with a budget far above the limit (keyword policy, so it
runs in seconds), and SFT replayed at its recorded speed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import LOCAL_GEPA, MINIMAL_SFT

from synth_nb.cli.main import main
from synth_nb.errors import ConfigError
from synth_nb.job.budget import Limits, Meter

ENV_KEY = "sk_env_CANARY_watchdog_ffffff_8888"
CHAT = '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture()
def gepa(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A real backend and task app, and a GEPA config whose budget (3000 rollouts) no test reaches."""
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    with start_backend(port=0, environment_api_key=ENV_KEY) as backend, \
            start_task_app("banking", api_key=ENV_KEY) as app:
        monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
        (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=app.url, budget=3000))
        yield backend


def _job_id(out: str, flow: str) -> str:
    return out.split(f"submitted {flow} job ", 1)[1].split()[0]


def test_max_rollouts_cancels_a_gepa_job_whose_body_lacks_the_limit_and_keeps_its_best_prompt(
        folder: Path, gepa: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The backstop for a backend that ignores the limit sent with a job: a job submitted without one, then
    followed with ``--attach --max-rollouts`` (``test_rollout_budget`` has the backend stopping by itself)."""
    assert main(["train", "-c", "gepa.toml", "--backend", gepa.url, "--no-poll"]) == 0
    job_id = _job_id(capsys.readouterr().err, "prompt_learning")  # --no-poll: stdout holds the id alone
    code = main(["train", "--attach", job_id, "--backend", gepa.url, "--max-rollouts", "60"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert f"watchdog on {job_id}: --max-rollouts 60: " in out
    assert "Final status: cancelled" in out
    lines = [ln for ln in out.splitlines() if "stopped by --max-rollouts 60: " in ln]
    assert len(lines) == 1, out
    used = float(lines[0].split("stopped by --max-rollouts 60: ", 1)[1].split()[0].replace(",", ""))
    assert 60 < used < 3000
    assert "(limit 60); cancel: cancelled; the best prompt the backend reports is kept (best_score " in lines[0]
    assert ENV_KEY not in out + err
    # the report gives the job's own total (rollouts already running when the cancel was sent count too)
    answer = httpx.get(f"{gepa.url}/api/prompt-learning/online/jobs/{job_id}/events",
                       headers={"Authorization": f"Bearer {gepa.api_key}"}, timeout=30)
    answer.raise_for_status()
    body = answer.json()
    events = body.get("events", body) if isinstance(body, dict) else body
    completed = [e["data"] for e in events if e["type"] == "prompt.learning.completed"]
    assert completed[-1]["finish_reason"] == "cancelled" and used == completed[-1]["rollouts_completed"]


def test_stop_on_plateau_stops_a_gepa_job_after_n_evaluations_without_a_new_best(
        folder: Path, gepa: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The stop is said at the evaluation that made N in a row without a new best (a fast backend scores a few
    more while the cancel travels: they are said apart, never counted into the limit's figure)."""
    assert main(["train", "-c", "gepa.toml", "--backend", gepa.url, "--stop-on-plateau", "3"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "stopped by --stop-on-plateau 3: " in ln)
    assert line.startswith("  stopped:  stopped by --stop-on-plateau 3: 3 evaluations without a new best (limit 3)")
    assert "Final status: cancelled" in out
    job_id = _job_id(out, "prompt_learning")
    trials = [json.loads(ln) for ln in (folder / "results" / job_id / "events.jsonl").read_text().splitlines()]
    scores = [e["data"]["mean"] for e in trials if e["type"] == "prompt.learning.trial.results"]
    best_at = scores.index(max(scores))
    after = len(scores) - 1 - best_at
    assert after >= 3  # three trials after the best one, none better
    if after > 3:  # the ones scored after the stop are named as such
        assert f"{after - 3} more evaluation" in line, line
    run = json.loads((folder / "results" / job_id / "run.json").read_text())
    assert run["stop_reason"]["kind"] == "plateau" and run["stopped_by"]["used_when_stopped"] == 3
    assert run["stop_reason"]["text"] == line.split("stopped:  ", 1)[1]


def test_max_minutes_stops_a_replayed_sft_job(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.local import start_backend

    (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(5)))
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 1}}) as backend:
        monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
        code = main(["train", "-c", "sft.toml", "--backend", backend.url, "--max-minutes", "0.05"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    line = next(ln for ln in out.splitlines() if "stopped by --max-minutes 0.05: " in ln)
    assert "(limit 3.0 s); cancel: cancelled" in line, line  # a duration, never "3.762e-05 minutes"
    assert re.search(r"--max-minutes 0\.05: [0-9.]+ s \(limit", line) and not re.search(r"[0-9]e-[0-9]", out), line
    job_id = _job_id(out, "sft")
    run = json.loads((folder / ".synth_nb" / "runs" / job_id / "run.json").read_text())
    assert run["status"] == "cancelled" and run["stopped_by"]["limit"] == "--max-minutes"
    metrics = (folder / ".synth_nb" / "runs" / job_id / "metrics.jsonl").read_text().splitlines()
    assert 0 < len(metrics) < 120  # the recording has 120 training steps; the job did not get to the end
    assert run["stopped_by"]["best"]["best_seen"]["series"] in ("train loss", "validation loss")


def test_limits_must_be_positive_and_meters_say_what_is_left() -> None:
    with pytest.raises(ConfigError, match="--max-rollouts must be greater than 0"):
        Limits.from_values({"max_rollouts": 0})
    assert not Limits().any and Limits.from_values({"stop_on_plateau": 2}).any
    meter = Meter("rollouts", "--max-rollouts", 100, 40, "rollouts")
    assert (meter.left, meter.fraction, meter.crossed) == (60, 0.4, False)
    assert meter.line() == "--max-rollouts 100: 40 rollouts used, 60 left"
    assert Meter("tokens", "--max-tokens", 10, None, "tokens").line() == \
        "--max-tokens 10: not reported by the backend so far"
    assert Meter("minutes", "--max-minutes", 2, 3.762e-05 / 60 * 60, "minutes").line() == \
        "--max-minutes 2: < 0.1 s used, 2 min 00 s left"
    assert Meter("minutes", "--max-minutes", 2, 1.0667, "minutes").line() == "--max-minutes 2: 1 min 04 s used, 56 s left"
    assert Meter("plateau", "--stop-on-plateau", 3, None, "evaluations without a new best").line() == \
        "--stop-on-plateau 3: no evaluation scored yet"


def test_a_bad_limit_is_a_usage_error_before_anything_is_sent(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=40))
    assert main(["train", "-c", "gepa.toml", "--backend", "http://127.0.0.1:9", "--max-minutes", "-1"]) == 2
    assert "--max-minutes must be greater than 0" in capsys.readouterr().err
