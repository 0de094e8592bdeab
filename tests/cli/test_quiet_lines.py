"""``synth-nb train`` off a terminal (CI logs, pipes) prints quietly: status changes, a progress line at most
each tenth of the work or every 30 s, and the final block, not a line per event and metric; ``--stream-format
chart`` off a terminal the same; ``--stream-format cli`` keeps a line per update anywhere; on a terminal the
default is still a line per update."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA

from synth_nb.cli.main import main
from synth_nb.cli.quiet import is_quiet

PROGRESS = re.compile(r"^\[\d\d:\d\d:\d\d\] progress: running · (\d+)/1000 rollouts \((\d+)%\)", re.M)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_is_the_default_off_a_terminal_only() -> None:
    assert is_quiet(io.StringIO(), None) and is_quiet(io.StringIO(), "chart") and is_quiet(_Terminal(), "quiet")
    assert not is_quiet(_Terminal(), None) and not is_quiet(_Terminal(), "chart")
    assert not is_quiet(io.StringIO(), "cli")


def _train(folder: Path, backend: Any, capsys: pytest.CaptureFixture[str], *flags: str) -> list[str]:
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, *flags]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return out.splitlines()


def test_a_gepa_job_off_a_terminal_is_a_few_lines(folder: Path, backend: Any, task_app: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=1000))
    for flags in ((), ("--stream-format", "chart"), ("--stream-format", "quiet")):
        lines = _train(folder, backend, capsys, *flags)
        text = "\n".join(lines)
        following = text.split("Final status:")[0].splitlines()  # the final block is the same in every mode
        assert len(following) <= 15, text  # submitted, two statuses, at most 11 progress lines
        assert "prompt.learning.trial.results" not in text and "[metric]" not in text  # no line per update
        # the tenth passed, from the count (the percent shown is rounded: 696/1000 says 70% in the seventh tenth)
        marks = [int(done) * 10 // 1000 for done, _ in PROGRESS.findall(text)]
        assert 1 <= len(marks) <= 11 and marks == sorted(set(marks)), text
        assert re.search(r"^\[\d\d:\d\d:\d\d\] status=succeeded$", text, re.M)
        assert "Final status: succeeded" in text and "  best_score: " in text

    every = _train(folder, backend, capsys, "--stream-format", "cli")
    assert sum("prompt.learning.trial.results" in line for line in every) > 10  # a line per update, as asked
    assert not PROGRESS.search("\n".join(every))
