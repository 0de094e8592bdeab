"""The journey on a terminal: run a job on the embedded backend's own banking task app, stop the backend
(``synth-nb backend --stop``), then ``--rerun`` it and ``--fork`` it. The background backend comes back on
another port; the re-run follows the task app there and says so, the fork's command names no old port."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pexpect
import pytest
from minimal_configs import LOCAL_GEPA

CLI = [sys.executable, "-m", "synth_nb"]
WAIT = 240  # generous: the machine may be loaded, and each command starts Python (and maybe the backend)

#: a port nothing listens on: the config's own task URL, which --task-url replaces
UNUSED_TASK_URL = "http://127.0.0.1:9"


@pytest.fixture()
def terminal(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A folder with ``gepa.toml``, and the environment of its commands (its own background backend, no keys);
    the background backend is stopped at the end."""
    (tmp_path / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=UNUSED_TASK_URL, budget=24))
    drop = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY",
            "SYNTH_SKIP_TASK_APP_HEALTH_CHECK")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(SYNTH_NB_BACKEND_DIR=str(tmp_path / "backend-data"), TERM="xterm", COLUMNS="140", LINES="40",
               PYTHONUNBUFFERED="1")
    try:
        yield tmp_path, env
    finally:
        subprocess.run([*CLI, "backend", "--stop"], cwd=tmp_path, env=env, capture_output=True, timeout=WAIT)


def _run(args: list[str], folder: Path, env: dict[str, str]) -> str:
    done = subprocess.run([*CLI, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _spawn(args: list[str], folder: Path, env: dict[str, str], children: list[pexpect.spawn]) -> pexpect.spawn:
    child = pexpect.spawn(CLI[0], [*CLI[1:], *args], cwd=str(folder), env=env, encoding="utf-8",
                          dimensions=(40, 140), timeout=WAIT)
    children.append(child)
    return child


def _ended(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


def test_rerun_and_fork_on_a_terminal_after_the_backend_restarted(terminal: tuple[Path, dict[str, str]],
                                                                  children: list[pexpect.spawn]) -> None:
    folder, env = terminal
    old_app = _run(["backend", "--task-app-url", "banking"], folder, env).strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/task-apps/banking", old_app), old_app
    old_port = f":{urlsplit(old_app).port}"

    child = _spawn(["train", "gepa.toml", "--backend", "local", "--task-url", old_app, "--yes"], folder, env, children)
    child.expect(r"submitted prompt_learning job (\S+)")
    parent = str(child.match.group(1))
    _ended(child)
    _run(["backend", "--stop"], folder, env)

    child = _spawn(["train", "--rerun", parent, "--yes"], folder, env, children)
    child.expect(r"embedded backend on (http://127\.0\.0\.1:\d+) ")
    new_app = f"{child.match.group(1)}/task-apps/banking"
    assert old_port not in new_app
    child.expect_exact(f"task app: the job used the embedded backend's bundled 'banking' task app at {old_app}; "
                       f"the re-run uses its copy on the backend now running, at {new_app}")
    child.expect_exact(f"diff against job {parent}: none")
    child.expect(r"submitted prompt_learning job \S+")
    assert "cannot be reached" not in _ended(child)

    child = _spawn(["train", "--fork", parent], folder, env, children)
    child.expect_exact("edit it, then preview with --dry-run or submit:")
    child.expect(r"synth-nb train [^\r\n]+")
    command = str(child.match.group(0))
    _ended(child)
    assert "--backend local" in command and old_port not in command and "--task-url" not in command
