"""``--check``'s verdict on a backend comes from a request to it, on the terminal and in the magic.

With no ``--backend`` the target is the hosted default or ``SYNTH_BACKEND_OVERRIDE``; a card used to say
"ready" for it without asking it anything (on a machine with no network too). The card now lists one job
with the API key: a real embedded backend answers ("ready"), a closed port does not ("not ready", and what
failed), a wrong key is refused; with no key, nothing is sent and the verdict says "backend not contacted".
The SFT example needs no task app, so the verdict is about the backend alone.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from minimal_configs import LOCAL_GEPA

from synth_nb import pipeline
from synth_nb.backend import LOCAL
from synth_nb.flows import get_flow
from synth_nb.pipeline import SecretSources, Target
from synth_nb.pipeline.card import build_card
from synth_nb.pipeline.preflight import check_backend

EXAMPLES = Path(__file__).parents[2] / "example_notebooks"
CLI = [sys.executable, "-m", "synth_nb"]
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
WAIT = 180  # generous: the machine may be loaded
UNREACHABLE = ("backend check: the backend could not be reached (ConnectError on GET /learning/jobs): is it "
               "running, and is --backend (or SYNTH_BACKEND_OVERRIDE) right? Offline, use --backend local")


@pytest.fixture()
def sft_folder(folder: Path) -> Path:
    shutil.copytree(EXAMPLES / "configs", folder / "configs")
    shutil.copytree(EXAMPLES / "data", folder / "data")
    return folder


def _terminal(folder: Path, backend_url: str, api_key: str) -> tuple[int, str]:
    """``synth-nb train configs/sft_tiny.toml --check`` with no --backend, in a real terminal."""
    # the terminal's own width, not one a COLUMNS in this process's environment would claim
    env = {k: v for k, v in os.environ.items()
           if k not in ("SYNTH_BACKEND_OVERRIDE", "SYNTH_API_KEY", "COLUMNS", "LINES")}
    env.update(SYNTH_BACKEND_OVERRIDE=backend_url, SYNTH_API_KEY=api_key, TERM="xterm", PYTHONUNBUFFERED="1")
    child = pexpect.spawn(CLI[0], [*CLI[1:], "train", "configs/sft_tiny.toml", "--check"], cwd=str(folder), env=env,
                          encoding="utf-8", dimensions=(40, 200), timeout=WAIT)
    try:
        child.expect(pexpect.EOF)
        text = child.before
    finally:
        child.close()
    text = re.sub(r"\r?\n {4,}", " ", text)  # a card line wrapped at the terminal's width: one line again
    return child.exitstatus, re.sub(r"\s*\r?\n\s*", "\n", text)


def test_the_terminal_says_ready_only_when_the_backend_answered(sft_folder: Path, backend: Any) -> None:
    code, text = _terminal(sft_folder, backend.url, backend.api_key)
    assert code == 0, text
    assert re.search(r"backend check: GET /learning/jobs answered with the API key accepted \(\d+ ms\)", text), text
    assert "verdict: ready (no job was sent)" in text

    code, text = _terminal(sft_folder, CLOSED, "sk_test_1234567890abcdef")
    assert code == 2, text
    assert UNREACHABLE in text and "verdict: not ready (no job was sent)" in text and "verdict: ready" not in text

    code, text = _terminal(sft_folder, backend.url, "sk_wrong_key_1234567890")
    assert code == 2, text
    assert "backend check: the backend refused the API key (HTTP 401 to GET /learning/jobs): check SYNTH_API_KEY" in text
    assert "verdict: not ready (no job was sent)" in text and "sk_wrong_key_1234567890" not in text


def test_the_magic_says_ready_only_when_the_backend_answered(sft_folder: Path, backend: Any, ip: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.utils.capture import capture_output

    # a terminal shell formats text only; a notebook kernel formats HTML too
    monkeypatch.setattr(ip.display_formatter, "active_types", ["text/plain", "text/html"])
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    shown: dict[str, Any] = {}
    for name, url in (("answered", backend.url), ("closed", CLOSED)):
        monkeypatch.setenv("SYNTH_BACKEND_OVERRIDE", url)
        with capture_output() as captured:
            cards = ip.run_line_magic("synth_train", "--config configs/sft_tiny.toml --check")
        (output,) = captured.outputs
        shown[name] = (cards, output.data["text/plain"], output.data["text/html"])
    cards, text, page = shown["answered"]
    assert [card.verdict for card in cards] == ["ready"] and cards[0].ok
    assert "backend check: GET /learning/jobs answered with the API key accepted" in text
    assert "verdict: ready (no job was sent)" in text and ">ready</strong> (no job was sent)" in page
    cards, text, page = shown["closed"]
    assert [card.verdict for card in cards] == ["not ready"] and not cards[0].ok
    assert UNREACHABLE in text and "verdict: not ready (no job was sent)" in text
    assert ">not ready</strong> (no job was sent)" in page and "could not be reached (ConnectError" in page


def test_with_no_key_the_backend_is_not_contacted(folder: Path, backend: Any, task_app: Any) -> None:
    target = Target(f"{backend.url}/api", backend.api_key)
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=40))
    prepared = pipeline.prepare_config(folder / "gepa.toml", overrides=pipeline.build_overrides({}, target), target=target,
                                sources=SecretSources())
    card = build_card(prepared, target, None)
    assert card.backend_check is not None and not card.backend_check.contacted and card.dry is None
    assert card.verdict == "backend not contacted" and not card.ok
    assert card.lines()[2] == "backend check: not contacted (no API key to sign a request with: set SYNTH_API_KEY)"
    assert card.lines()[-1] == "verdict: backend not contacted (no job was sent)"
    assert "backend not contacted</strong> (no job was sent)" in card._repr_html_()
    endpoints = get_flow("sft").endpoints
    assert not check_backend(Target(LOCAL), "sk-key", endpoints).contacted  # --backend local, not started
