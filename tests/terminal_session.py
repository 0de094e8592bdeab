"""``synth-nb`` in a real terminal of a given size, for journeys: a pexpect child, or a tmux pane whose screen
(with or without its colours) a test reads the way a person sees it.

Every journey runs at the two sizes a terminal user meets most, 80×24 and 120×40 (``SIZES``). Waits are on
conditions with generous bounds (the machine may be loaded); nothing here times the command.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pytest

__all__ = ["CLI", "CTRL_C", "DOWN", "ENTER", "ESC", "SIZES", "WAIT", "Pane", "clean_env", "replay_backend", "sizes",
           "spawn"]

CLI = [sys.executable, "-m", "synth_nb"]
#: generous: the machine may be loaded
WAIT = 90
DOWN, ENTER, CTRL_C, ESC = "\x1b[B", "\r", "\x03", "\x1b"
#: (columns, rows)
SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
#: run a test at each size: its ``size`` argument is (columns, rows)
sizes = pytest.mark.parametrize("size", list(SIZES.values()), ids=list(SIZES))
#: settings a journey must not inherit from the shell that runs the suite
_INHERITED = ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL",
              "SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "COLUMNS", "LINES")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the keys and settings a run could pick up, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED}
    env.update(TERM="xterm-256color", PYTHONUNBUFFERED="1", **extra)
    return env


def spawn(args: list[str], cwd: Path, size: tuple[int, int], env: Mapping[str, str],
          children: list[pexpect.spawn], *, shell: str | None = None) -> pexpect.spawn:
    """``synth-nb ARGS`` on a pseudo-terminal of ``size``; with ``shell``, ``bash -c`` runs
    ``synth-nb ARGS SHELL`` (e.g. ``| tee log``) with ``pipefail``, so the exit status is the command's."""
    columns, rows = size
    if shell is None:
        child = pexpect.spawn(CLI[0], [*CLI[1:], *args], cwd=str(cwd), env=dict(env), encoding="utf-8",
                              dimensions=(rows, columns), timeout=WAIT)
    else:
        line = f"set -o pipefail; {shlex.join([*CLI, *args])} {shell}"
        child = pexpect.spawn("bash", ["-c", line], cwd=str(cwd), env=dict(env), encoding="utf-8",
                              dimensions=(rows, columns), timeout=WAIT)
    children.append(child)
    return child


@contextmanager
def replay_backend(speed: float) -> Iterator[Any]:
    """A real embedded backend in this process replaying the bundled recordings ``speed`` times as fast."""
    from synth_nb.local import start_backend

    backend = start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": speed}})
    try:
        yield backend
    finally:
        backend.stop()


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True, timeout=WAIT).stdout


class Pane:
    """A detached tmux pane of ``size`` running ``command`` in ``cwd``; ``close()`` ends its server.

    The pane prints ``EXIT=<status>`` when the command ends and stays open, so its last screen can be read.
    """

    def __init__(self, name: str, command: list[str], cwd: Path, size: tuple[int, int], env: Mapping[str, str]) -> None:
        self.name = f"{name}{os.getpid()}"
        script = cwd / f"{self.name}.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        script.write_text(f"{exports}cd {shlex.quote(str(cwd))}\n{shlex.join(command)}\necho EXIT=$?\nsleep 900\n")
        columns, rows = size
        _tmux("-L", self.name, "new-session", "-d", "-s", self.name, "-x", str(columns), "-y", str(rows),
              f"bash {shlex.quote(str(script))}")

    def screen(self, *, history: bool = False, colours: bool = False, joined: bool = False) -> str:
        """What the pane shows (``history``: the scrollback too; ``colours``: with its SGR sequences;
        ``joined``: a line the terminal wrapped as one line again)."""
        args = ["-L", self.name, "capture-pane", "-p", "-t", self.name]
        if history:
            args += ["-S", "-", "-E", "-"]
        if colours:
            args.append("-e")
        if joined:
            args.append("-J")
        return _tmux(*args)

    def send_keys(self, *keys: str) -> None:
        """Keys as tmux names them (``Escape``, ``Enter``, ``Down``, ``C-c``)."""
        _tmux("-L", self.name, "send-keys", "-t", self.name, *keys)

    def history_size(self) -> int:
        return int(_tmux("-L", self.name, "display", "-p", "-t", self.name, "#{history_size}").strip())

    def wait_for(self, condition: Callable[[str], bool], *, timeout: float = 300, colours: bool = False,
                 joined: bool = False) -> str:
        """The first screen for which ``condition`` holds (checked twice a second)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen(colours=colours, joined=joined)
            if condition(screen):
                return screen
            time.sleep(0.5)
        raise AssertionError(f"the screen never showed what was awaited:\n{screen}")

    def finished(self, timeout: float = 300) -> str:
        """The whole scrollback once the command has ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            whole = self.screen(history=True)
            if "EXIT=" in whole:
                return whole
            time.sleep(1)
        raise AssertionError(f"the command did not finish:\n{self.screen(history=True)}")

    def exit_status(self) -> int:
        whole = self.finished()
        return int(whole.rsplit("EXIT=", 1)[1].split()[0])

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, timeout=WAIT)
