"""``synth-nb train --check`` and ``%synth_train --check``: the pre-flight card, and never a job."""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import LOCAL_GEPA
from terminal_session import CLI, SIZES, Pane, clean_env

from synth_nb import pipeline
from synth_nb.cli.main import main

ENV_KEY = "sk_env_CANARY_check_dddddd_4444"
PATHS = ("/prompt-learning/online/jobs", "/rl/jobs", "/learning/jobs")


@pytest.fixture()
def backend_options(env_key: str) -> dict[str, Any]:
    return {"environment_api_key": env_key}  # the default executor


def _no_jobs(backend: Any) -> bool:
    headers = {"Authorization": f"Bearer {backend.api_key}"}
    for path in PATHS:
        answer = httpx.get(f"{backend.url}/api{path}", headers=headers, timeout=30)
        if answer.status_code == 200:
            body = answer.json()
            if list(body.get("jobs", body) if isinstance(body, dict) else body):
                return False
    return True


def test_check_prints_the_card_and_creates_no_job(folder: Path, backend: Any, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.local.examples import start_task_app

    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    with start_task_app("banking", api_key=ENV_KEY) as app:
        (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=app.url, budget=200))
        code = main(["train", "-c", "gepa.toml", "--backend", backend.url, "--dry-run", "--check"])
        out, err = capsys.readouterr()
        assert code == 0, out + err
        assert "== pre-flight check: gepa.toml [prompt_learning/gepa]" in out
        assert "/health healthy (" in out and "/task_info: answered (" in out
        assert "dry rollout: seed 0 (train split) through the task app with keyword-overlap: reward" in out
        assert "call 1 sent [user]: Customer Query:" in out and "call 1 reply: banking_classify(" in out
        assert "rollouts: 232 = rollout.budget 200" in out
        assert "cost: unknown (the model catalogue has no price for gpt-4.1-mini)" in out
        assert "verdict: ready (no job was sent)" in out
        assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--check", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["dry_rollout"]["reward"] in (0.0, 1.0) and doc["estimate"]["rollouts"] == 232
    assert doc["task_app"]["health_ms"] > 0 and doc["dry_rollout"]["trace"][0]["messages"][0]["role"] == "system"
    assert ENV_KEY not in out + err + json.dumps(doc) and backend.api_key not in out + err
    assert _no_jobs(backend)


def test_check_exits_2_when_the_task_app_is_down(folder: Path, backend: Any, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=40))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--check"]) == 2
    out = capsys.readouterr().out
    assert "task app http://127.0.0.1:9: cannot be reached" in out and "dry rollout: skipped" in out
    assert "verdict: not ready (no job was sent)" in out
    assert _no_jobs(backend)


@pytest.mark.torch
def test_rl_check_runs_one_rollout_of_the_starting_model(folder: Path, backend: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.local.examples import start_task_app

    config = (Path(__file__).parents[2] / "example_notebooks" / "configs" / "rl_tiny.toml").read_text()
    pipeline.use_local_backend(backend)
    try:
        with start_task_app("charclass", api_key=ENV_KEY) as app:
            (folder / "rl.toml").write_text(config.replace("http://127.0.0.1:8102", app.url))
            code = main(["train", "-c", "rl.toml", "--backend", "local", "--check"])
    finally:
        pipeline.stop_local_backend()
    out = capsys.readouterr().out
    assert code == 0, out
    assert "/health healthy (" in out and "dry rollout: seed 0 through the task app with tiny random-init GPT-2" in out
    assert "call 1 sent [user]: " in out and "call 1 reply: " in out
    settings = tomllib.loads(config)
    assert "rollouts: 2,048 = 1 epoch(s) x 60 iterations x batch_size 4 x group_size 8 x max_turns 1 + " \
           "evaluation 32 seeds x 4 rounds" in out
    assert settings["training"]["iterations_per_epoch"] == 60
    assert "cost: $0 (the embedded backend runs on this machine)" in out
    # the device the GRPO loop trains on here, as SFT's: this machine's own choice, never invented
    assert re.search(r"^device: (CPU \(no CUDA or MPS device\), float32|CUDA .+|Apple MPS, float32) — ", out, re.M)
    assert "— training runs on the embedded backend's machine" in out
    assert ENV_KEY not in out


def test_the_magic_displays_the_card_as_html_and_sends_nothing(folder: Path, backend: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    from synth_nb.local.examples import start_task_app

    ip = get_ipython()
    ip.run_line_magic("load_ext", "synth_nb")
    ip.user_ns["__session__"] = str(folder / "check.ipynb")
    # a terminal shell formats text only; a notebook kernel formats HTML too
    monkeypatch.setattr(ip.display_formatter, "active_types", ["text/plain", "text/html"])
    pipeline.use_local_backend(backend)
    try:
        with start_task_app("banking", api_key=ENV_KEY) as app:
            (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=app.url, budget=40))
            with capture_output() as captured:
                cards = ip.run_line_magic("synth_train", "--config gepa.toml --backend local --check")
        assert _no_jobs(backend)
    finally:  # also stops the backend handed over
        pipeline.stop_local_backend()
        ip.user_ns.pop("__session__", None)
    assert [card.ok for card in cards] == [True]
    (shown,) = captured.outputs
    page = shown.data["text/html"]
    assert "<h3" in page and "pre-flight check: gepa.toml [prompt_learning/gepa]" in page
    assert "trace (prompt sent, reply)" in page and "<script" not in page
    assert "verdict: ready" in shown.data["text/plain"] and ENV_KEY not in page + shown.data["text/plain"]


def test_the_card_wraps_between_words_at_the_terminals_width(folder: Path, backend: Any) -> None:
    """In a terminal (tmux at 80×24 and 120×40) the card's lines wrap between words, each continuation under its
    line's text, instead of being cut mid-word at the edge; piped, a figure stays one line (the tests above)."""
    from synth_nb.local.examples import start_task_app

    env = clean_env(SYNTH_API_KEY=backend.api_key)
    with start_task_app("banking", api_key=ENV_KEY) as app:
        (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=app.url, budget=200))
        for columns, rows in SIZES.values():
            pane = Pane(f"card{columns}", [*CLI, "train", "-c", "gepa.toml", "--backend", backend.url, "--check"],
                        folder, (columns, rows), env)
            try:
                assert pane.exit_status() == 0
                screen = pane.screen(history=True, joined=True)  # a line wider than the pane comes back whole
            finally:
                pane.close()
            lines = screen.split("EXIT=")[0].splitlines()
            assert all(len(line) <= columns for line in lines), [line for line in lines if len(line) > columns]
            start = next(i for i, line in enumerate(lines) if line.startswith("  wall time: "))
            following = list(itertools.takewhile(lambda line: line.startswith("      "), lines[start + 1:]))
            assert following, lines[start:]  # its sentence goes on under the figure's text, whole words
            sentence = " ".join(line.strip() for line in [lines[start], *following])
            assert "run once by this check through the job's own search, task-app runner and event store" in sentence
