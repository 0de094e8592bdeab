"""synth_nb.cli.follow.run_submit: lines, hidden noise, final block, exit codes, record, Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synth_nb.backend import normalize_backend_url
from synth_nb.cli.follow import run_submit
from synth_nb.flows import get_flow
from synth_nb.job import read_recording
from synth_nb.pipeline import Target
from synth_nb.pipeline.actions import Batch
from synth_nb.pipeline.request import Request
from synth_nb.plan import Plan, Step


def _options(**overrides: object) -> Request:
    values: dict[str, object] = {"poll": True, "poll_interval": 0.5, "poll_timeout": 60.0, "record": None,
                                 "stream_format": "cli"}  # a line per update, off a terminal too
    values.update(overrides)
    return Request(Path.cwd(), **values)  # type: ignore[arg-type]


def follow_plans(plans: list[Plan], options: Request, url: str, api_key: str, *, out: io.StringIO) -> int:
    return run_submit(Batch.of_plans(plans, Target(normalize_backend_url(url)), api_key), options, out=out)


def _plan(flow: str = "rl", **fake: object) -> Plan:
    path = {"rl": "/rl/jobs", "prompt_learning": "/prompt-learning/online/jobs"}[flow]
    return Plan(flow=flow, endpoints=get_flow(flow).endpoints,
                algorithm=None, steps=[Step("POST", path, {"metadata": {"fake": fake}})])


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_success_prints_events_and_final_block_and_exits_0(fake_backend) -> None:
    out = io.StringIO()
    code = follow_plans([_plan(events=3)], _options(), fake_backend.url, fake_backend.api_key, out=out)
    text = out.getvalue()
    assert code == 0
    assert "submitted rl job job_" in text
    assert "] [3] rl.progress: step 0" in text
    assert "status=succeeded" in text
    assert "Final status: succeeded" in text and "events:   6" in text
    assert fake_backend.api_key not in text
    assert Path(".synth_nb/jobs.json").is_file()


def test_noise_is_hidden_as_0_2_24_does(fake_backend) -> None:
    out = io.StringIO()
    follow_plans([_plan(events=3, type="rl.modal.container.ready")], _options(), fake_backend.url,
              fake_backend.api_key, out=out)
    assert "modal" not in out.getvalue()
    assert "rl.job.completed" in out.getvalue()


def test_failed_job_exits_1_with_error_details(fake_backend) -> None:
    out = io.StringIO()
    code = follow_plans([_plan(events=1, final="failed")], _options(), fake_backend.url, fake_backend.api_key, out=out)
    assert code == 1
    assert "rl.job.failed (error): job failed" in out.getvalue()
    assert "Error details: boom" in out.getvalue()
    assert "Final status: failed" in out.getvalue()


def test_no_poll_prints_the_job_id_and_exits_0(fake_backend) -> None:
    out = io.StringIO()
    assert follow_plans([_plan(hang=True)], _options(poll=False), fake_backend.url, fake_backend.api_key, out=out) == 0
    job_id = out.getvalue().strip().splitlines()[-1]
    assert job_id in fake_backend.state.jobs


def test_poll_timeout_exits_1_and_says_how_to_reattach(fake_backend, capsys: pytest.CaptureFixture) -> None:
    out = io.StringIO()
    code = follow_plans([_plan(hang=True)], _options(poll_timeout=0.5), fake_backend.url, fake_backend.api_key, out=out)
    assert code == 1
    assert "timed out after 0.5s" in out.getvalue()
    assert "synth-nb attach" in capsys.readouterr().err


def test_record_saves_the_stream_without_secrets(fake_backend, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    follow_plans([_plan(events=4, metrics=3)], _options(record=path), fake_backend.url, fake_backend.api_key,
              out=io.StringIO())
    kinds = [entry["kind"] for entry in read_recording(path)]
    assert kinds[0] == "meta" and kinds.count("event") == 7 and kinds.count("metric") == 4
    assert fake_backend.api_key not in path.read_text()


def test_several_plans_prefix_lines_and_fail_if_one_fails(fake_backend) -> None:
    out = io.StringIO()
    code = follow_plans([_plan(events=2), _plan("prompt_learning", events=2, final="failed")], _options(),
                     fake_backend.url, fake_backend.api_key, out=out)
    assert code == 1
    ids = list(fake_backend.state.jobs)
    assert any(line.split("] ", 1)[1].startswith(ids[1]) for line in out.getvalue().splitlines()
               if line.startswith("[") and "] " in line)


def test_ctrl_c_cancels_the_job_on_the_backend_and_exits_130(fake_backend, tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "from synth_nb.cli.follow import run_submit\n"
        "from synth_nb.pipeline.request import Request\n"
        "from synth_nb.pipeline import Target\n"
        "from synth_nb.flows import get_flow\n"
        "from synth_nb.pipeline.actions import Batch\n"
        "from synth_nb.plan import Plan, Step\n"
        "plan = Plan(flow='rl', endpoints=get_flow('rl').endpoints, algorithm=None,\n"
        "            steps=[Step('POST', '/rl/jobs', {'metadata': {'fake': {'hang': True}}})])\n"
        "options = Request(Path.cwd(), poll=True, poll_interval=0.5, poll_timeout=60.0)\n"
        f"sys.exit(run_submit(Batch.of_plans([plan], Target({fake_backend.url + '/api'!r}), sys.argv[1]), options))\n"
    )
    proc = subprocess.Popen([sys.executable, str(script), fake_backend.api_key], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 30
        while not any(j.status == "running" for j in fake_backend.state.jobs.values()):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    job = next(iter(fake_backend.state.jobs.values()))
    assert job.status == "cancelled"
    assert "asking the backend to cancel" in err
    assert json.dumps(fake_backend.api_key) not in err


def test_prompt_learning_job_writes_summary_into_results_folder(tmp_path: Path) -> None:
    from synth_nb.local import start_backend

    results = tmp_path / "results"
    plan = Plan(flow="prompt_learning", endpoints=get_flow("prompt_learning").endpoints,
                algorithm="gepa", results_folder=results, steps=[Step(
        "POST", "/prompt-learning/online/jobs",
        {"algorithm": "gepa", "metadata": {"local_executor": "replay", "recording": "gepa",
                                            "replay_speed": 1000}})])
    out = io.StringIO()
    with start_backend() as backend:
        code = follow_plans([plan], _options(), backend.url, backend.api_key, out=out)
    assert code == 0, out.getvalue()
    (job_dir,) = results.iterdir()
    summary = (job_dir / "summary.md").read_text(encoding="utf-8")
    assert job_dir.name in summary and "GEPA" in summary.upper()
    assert (job_dir / "summary_curve.png").read_bytes().startswith(b"\x89PNG")
    assert f"summary:  {job_dir / 'summary.md'}" in out.getvalue()
    assert backend.api_key not in summary
