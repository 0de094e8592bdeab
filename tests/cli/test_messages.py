"""Messages that said the wrong thing, each read in a terminal at 80×24 and 120×40: a ``.env`` folder is said
to be a folder; a config whose dataset is missing is invalid in the picker; the count of configs found is
the count listed; ``--env-file .env`` is shown as typed; the SFT card counts tokens once; ``attach`` of a
finished job does not speak as if it were live.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT
from terminal_session import CLI, WAIT, Pane, clean_env, replay_backend, sizes, spawn

SYNTH_KEY = "sk_synth_CANARY_messages_aaaa_4321"
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "configs" / "train.jsonl").write_text(GOOD_LINE * 4)
    return tmp_path


def _done(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    return " ".join(child.before.split())  # the terminal's own line breaks do not matter here


@sizes
def test_a_dotenv_folder_is_said_to_be_a_folder(project: Path, children: list, size: tuple[int, int]) -> None:
    (project / ".env").mkdir()
    (project / ".env" / "keys").write_text(f"SYNTH_API_KEY={SYNTH_KEY}\n")
    said = _done(spawn(["train", "configs/sft.toml", "--dry-run"], project, size, clean_env(), children))
    assert children[-1].exitstatus == 2
    assert "missing required key SYNTH_API_KEY" in said
    assert f"{project / '.env'} (a folder, not a file: skipped)" in said


@pytest.fixture()
def three_configs(project: Path) -> Path:
    (project / "configs" / "gepa.toml").write_text(MINIMAL_GEPA)
    (project / "bad").mkdir()
    (project / "bad" / "missingdata.toml").write_text(MINIMAL_SFT.replace('"train.jsonl"', '"nothere.jsonl"'))
    return project


@sizes
def test_a_config_whose_dataset_is_missing_is_invalid_in_the_picker(three_configs: Path, size: tuple[int, int]) -> None:
    pane = Pane("picker", [*CLI, "train", "--dry-run"], three_configs, size, clean_env(SYNTH_API_KEY=SYNTH_KEY))
    try:
        screen = pane.wait_for(lambda text: "configs/sft.toml" in text, joined=True, timeout=WAIT)
        pane.send_keys("Escape")
        assert pane.exit_status() == 130
    finally:
        pane.close()
    lines = screen.splitlines()
    # the first problem in full above the list (the terminal wraps it), the row cut to the width with "…"
    assert "1 of 3 training configs cannot be submitted:" in lines
    assert ("  bad/missingdata.toml: line 8 [job.data]: dataset file not found: nothere.jsonl (no file at "
            f"{three_configs / 'bad' / 'nothere.jsonl'}; fix the path") in "".join(lines)
    (row,) = [line for line in lines if "bad/missingdata.toml  [sft]" in line]
    assert "[sft]  invalid: line 8 [job.data]: dataset file no" in row and len(row.rstrip()) <= size[0]
    assert next(line for line in lines if "configs/sft.toml  [sft]" in line).rstrip().endswith("valid")


@sizes
def test_the_count_of_configs_found_is_the_count_listed(three_configs: Path, children: list,
                                                         size: tuple[int, int]) -> None:
    said = _done(spawn(["train", "--dry-run"], three_configs, size, clean_env(SYNTH_API_KEY=SYNTH_KEY), children,
                       shell="| cat"))
    assert children[-1].exitstatus == 2
    assert f"3 training configs found under {three_configs} (2 valid, 1 invalid)" in said
    assert said.count("(valid)") == 2 and said.count("(invalid: ") == 1


@sizes
def test_env_file_is_shown_as_typed(project: Path, children: list, size: tuple[int, int]) -> None:
    (project / ".env").write_text(f"SYNTH_API_KEY={SYNTH_KEY}\n")
    child = spawn(["train", "configs/sft.toml", "--env-file", ".env", "--backend", "http://127.0.0.1:9", "--no-poll"],
                  project, size, clean_env(), children)
    child.expect(r"Submit\? \[Y/n\]")
    preview = child.before
    child.sendline("n")
    said = _done(child)
    assert f"SYNTH_API_KEY ••••{SYNTH_KEY[-4:]} (.env)\r\n" in preview
    assert "../.env" not in preview and SYNTH_KEY not in preview
    assert "nothing was sent" in said


@sizes
def test_the_sft_card_counts_tokens_once(project: Path, children: list, size: tuple[int, int]) -> None:
    child = spawn(["train", "configs/sft.toml", "--check", "--backend", "local"], project, size, clean_env(), children)
    child.expect(pexpect.EOF, timeout=300)
    child.close()
    # a figure wrapped at the terminal's width goes on under its text: one line again
    lines = re.sub(r"\n {4,}", " ", child.before.replace("\r\n", "\n")).splitlines()
    assert child.exitstatus == 0
    (data,) = [line for line in lines if line.startswith("training data:")]
    assert data == "training data: train.jsonl, 4 rows"
    counts = [line for line in lines if "tokens" in line]
    assert len(counts) == 1 and counts[0].startswith("  tokens: ~") and "byte tokenizer" in counts[0]


@pytest.fixture()
def replay() -> Iterator[object]:
    with replay_backend(20) as backend:
        yield backend


@sizes
def test_attach_of_a_finished_job_says_it_has_ended(project: Path, replay: object, children: list,
                                                     size: tuple[int, int]) -> None:
    env = clean_env(SYNTH_API_KEY=replay.api_key)  # type: ignore[attr-defined]
    ran = subprocess.run([*CLI, "train", "configs/sft.toml", "--backend", replay.url, "--yes"],  # type: ignore[attr-defined]
                         cwd=project, env=env, capture_output=True, text=True, timeout=WAIT * 3,
                         stdin=subprocess.DEVNULL)
    assert ran.returncode == 0, ran.stderr
    job_id = ran.stdout.split("submitted sft job ", 1)[1].split()[0]
    said = _done(spawn(["attach", job_id], project, size, env, children))
    assert children[-1].exitstatus == 0
    assert f"attached to sft job {job_id} (ended: succeeded, " in said
    assert "so far" not in said
