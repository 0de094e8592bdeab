"""``synth-nb train`` shows the compact masked preview before submitting: on a terminal it asks to confirm
(Enter: yes, ``n``: nothing sent, ``--yes``: no question); off a terminal the preview goes to stderr and the
submission goes on. Config paths are accepted without ``--config``, as synth-ai 0.2.24 and the bundled
configs' own comments write them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from minimal_configs import MINIMAL_SFT

from synth_nb.cli.main import main

CLI = [sys.executable, "-m", "synth_nb"]
WAIT = 90  # generous: the machine may be loaded
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


def _env(backend: object) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL")}
    env.update(SYNTH_API_KEY=backend.api_key, TERM="xterm", COLUMNS="140", LINES="40",  # type: ignore[attr-defined]
               PYTHONUNBUFFERED="1")
    return env


@pytest.fixture()
def project(tmp_path: Path, fake_backend) -> Path:  # type: ignore[no-untyped-def]
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "train.jsonl").write_text(GOOD_LINE * 3)
    return tmp_path


def _spawn(args: list[str], folder: Path, backend: object, children: list[pexpect.spawn]) -> pexpect.spawn:
    child = pexpect.spawn(CLI[0], [*CLI[1:], *args], cwd=str(folder), env=_env(backend), encoding="utf-8",
                          dimensions=(40, 140), timeout=WAIT)
    children.append(child)
    return child


def test_a_terminal_sees_the_preview_and_declining_sends_nothing(project: Path, fake_backend,  # type: ignore[no-untyped-def]
                                                                 children: list) -> None:
    child = _spawn(["train", "sft.toml", "--backend", fake_backend.url, "--no-poll"], project, fake_backend, children)
    child.expect("Submit\\? \\[Y/n\\]")
    screen = child.before
    assert "== sft.toml  (sft)" in screen and "data:     train.jsonl (" in screen
    assert "1 job → " + fake_backend.url in screen
    assert fake_backend.api_key not in screen and fake_backend.api_key[-4:] in screen
    child.sendline("n")
    child.expect("nothing was sent")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert not fake_backend.state.jobs


def test_enter_on_a_terminal_submits(project: Path, fake_backend, children: list) -> None:  # type: ignore[no-untyped-def]
    child = _spawn(["train", "sft.toml", "--backend", fake_backend.url, "--no-poll"], project, fake_backend, children)
    child.expect("Submit\\? \\[Y/n\\]")
    child.send("\r")
    child.expect("submitted sft job")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and len(fake_backend.state.jobs) == 1


def test_yes_skips_the_question_on_a_terminal(project: Path, fake_backend, children: list) -> None:  # type: ignore[no-untyped-def]
    child = _spawn(["train", "-c", "sft.toml", "--backend", fake_backend.url, "--no-poll", "-y"], project,
                   fake_backend, children)
    child.expect("1 job → ")
    child.expect("submitted sft job")
    assert "Submit?" not in child.before
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and len(fake_backend.state.jobs) == 1


def test_off_a_terminal_the_preview_goes_to_stderr_and_the_job_is_sent(project: Path, fake_backend) -> None:  # type: ignore[no-untyped-def]
    done = subprocess.run([*CLI, "train", "sft.toml", "--backend", fake_backend.url, "--no-poll"], cwd=project,
                          env=_env(fake_backend), text=True, capture_output=True, timeout=WAIT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    (job_id,) = fake_backend.state.jobs
    assert done.stdout.splitlines()[-1] == job_id and "== sft.toml" not in done.stdout
    assert "== sft.toml  (sft)" in done.stderr and "1 job → " in done.stderr and "Submit?" not in done.stderr
    assert fake_backend.api_key not in done.stdout + done.stderr


def test_config_paths_without_the_flag_are_configs(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setenv("SYNTH_API_KEY", "sk_synth_positional_aaaaaaaa_1234")
    (project / "other.toml").write_text(MINIMAL_SFT)
    assert main(["train", "sft.toml", "--dry-run"]) == 0
    assert "== sft.toml" in capsys.readouterr().out
    assert main(["train", "sft.toml", "-c", "other.toml", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "== sft.toml" in out and "== other.toml" in out and "dry run: 2 valid plan(s)" in out


def test_a_script_captures_exactly_the_job_id_with_no_poll(project: Path, fake_backend) -> None:  # type: ignore[no-untyped-def]
    """``JOB=$(synth-nb train … --no-poll)``: stdout holds the id alone; the sentence goes to stderr."""
    script = 'JOB=$("$@") && printf "<%s>" "$JOB"'
    done = subprocess.run(["bash", "-c", script, "capture", *CLI, "train", "sft.toml", "--backend", fake_backend.url,
                           "--no-poll"], cwd=project, env=_env(fake_backend), text=True, capture_output=True,
                          timeout=WAIT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    (job_id,) = fake_backend.state.jobs
    assert done.stdout == f"<{job_id}>"
    assert f"submitted sft job {job_id} to " in done.stderr
