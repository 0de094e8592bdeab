"""A backend that never answers (nothing listens at the URL) is said at once and given up on quickly: the
terminal and the magic print ``connecting to URL …`` before the first request, and a refused connection ends
the command with the one-line network error and exit code 2 (nothing was created). The retry budget is kept
for a backend that answered before. How long giving up takes is measured in ``benchmarks/unreachable.py``."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from hostile_sandbox import Tree, assert_clean, synth_nb
from IPython.core.error import UsageError


@pytest.fixture()
def nowhere() -> str:
    """A 127.0.0.1 URL where nothing listens (a port bound for a moment, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _said_then_failed(err: str, url: str) -> None:
    connecting = err.index(f"connecting to {url}/api …")
    [error] = [line for line in err.splitlines() if line.startswith("error: ")]
    assert err.index(error) > connecting
    assert "ConnectError" in error and "nothing was sent" in error


def test_train_says_where_it_connects_and_exits_2_when_nothing_answers(nowhere: str, work: Path,
                                                                         tree: Tree) -> None:
    ran = synth_nb(work, "train", "cfg.toml", "--backend", nowhere, "--yes")
    assert ran.code == 2, ran.text
    assert_clean(ran)
    _said_then_failed(ran.err, nowhere)
    assert tree.changed_outside(work) == [] and not (work / ".synth_nb" / "jobs.json").exists()


def test_attach_says_where_it_connects_and_exits_2_when_nothing_answers(nowhere: str, work: Path) -> None:
    ran = synth_nb(work, "attach", "pl_0123456789abcdef", "--backend", nowhere)
    assert ran.code == 2, ran.text
    assert_clean(ran)
    _said_then_failed(ran.err, nowhere)


def test_the_magic_says_where_it_connects_and_raises_the_one_line_error(
        nowhere: str, ip: Any, work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(work)
    monkeypatch.setenv("SYNTH_API_KEY", "sk_magic_CANARY_0123456789abcdef")
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("synth_train", f"--attach pl_0123456789abcdef --backend {nowhere} --poll-timeout 60")
    out = capsys.readouterr().out
    assert f"connecting to {nowhere}/api …" in out
    message = str(raised.value)
    assert "\n" not in message and "ConnectError" in message and "nothing was sent" in message
