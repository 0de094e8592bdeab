"""What the hostile-backend tests share: the real CLI run in a sandboxed working folder, and what it may print.

A module of its own (not ``conftest``), so the tests import it by a name no other folder's conftest takes.

Each test works in ``sandbox/a/b/project`` (so ``results/../../../outside/x`` would land in the sandbox, where it
is seen) beside a user's own ``README.md`` and ``config.toml``; ``Tree`` records every file of the sandbox so
a test can assert that nothing was written outside the folders the product owns.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hostile_backend import API_KEY

ENV_KEY = "sk_env_hostile_CANARY_fedcba9876543210"
#: what may never reach a terminal from a backend: C0 but tab and line feed, DEL, C1, bidi controls
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: the folders of the working folder the product writes in
OWNED = (".synth_nb", "results", "runs")
#: a command's generous bound: a hang fails the test, it is not a timing
COMMAND_SECONDS = 240


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if re.match(r"^(synth-nb( \w+)?: )?error: ", line)]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL")}
    env.update(SYNTH_API_KEY=API_KEY, ENVIRONMENT_API_KEY=ENV_KEY, SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1",
               PYTHONIOENCODING="utf-8", COLUMNS="120", **extra)
    return env


def synth_nb(folder: Path, *args: str, timeout: float = COMMAND_SECONDS) -> Ran:
    """``synth-nb ARGS`` in ``folder`` as a child process, its output captured (not a terminal: line mode)."""
    done = subprocess.run([sys.executable, "-m", "synth_nb", *args], cwd=folder, env=environment(),
                          capture_output=True, timeout=timeout, check=False)
    return Ran(done.returncode, done.stdout.decode("utf-8", errors="replace"),
               done.stderr.decode("utf-8", errors="replace"))


class Tree:
    """Every file under ``root`` with a digest of its content, to compare before and after a command."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = self._scan()

    def _scan(self) -> dict[str, str]:
        files = {}
        for dirpath, _dirs, names in os.walk(self.root):
            for name in names:
                path = Path(dirpath) / name
                files[str(path.relative_to(self.root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        return files

    def changed(self) -> list[str]:
        """Files added, removed or changed since this tree was taken."""
        now = self._scan()
        return sorted(name for name in set(now) | set(self.files) if now.get(name) != self.files.get(name))

    def changed_outside(self, work: Path) -> list[str]:
        """Changes outside the folders of ``work`` the product owns."""
        owned = [str((work / name).relative_to(self.root)) + os.sep for name in OWNED]
        return [name for name in self.changed() if not any(name.startswith(prefix) for prefix in owned)]


def assert_clean(ran: Ran) -> None:
    """No raw control character, no traceback, no key in what a command printed."""
    found = RAW_CONTROL.search(ran.text)
    assert found is None, f"raw {found.group()!r} printed:\n{ran.text[max(0, found.start() - 200):found.end() + 200]!r}"
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert API_KEY not in ran.text and ENV_KEY not in ran.text
