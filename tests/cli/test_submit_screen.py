"""What a terminal user meets between "train" and the job, at 80×24 and 120×40: the one-screen summary before
``Submit? [Y/n]`` (two bundled GEPA configs fit whole), an answer that is not one asked again, Esc meaning "no,
nothing sent" (exit 130, as at a picker), ``--rerun`` asking like every other submission, synth-ai 0.2.24's
``--tui`` drawing the live chart, and ``--report-to`` saying where it wrote and how to look.

One replayed SFT job (the embedded backend, in this process) is the parent of the re-runs; every terminal run
is a real ``synth-nb`` on a pseudo-terminal (pexpect) or a tmux pane (what the screen shows).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest
from minimal_configs import MINIMAL_SFT
from terminal_session import CLI, ENTER, ESC, WAIT, Pane, clean_env, replay_backend, sizes, spawn

from synth_nb.cli.main import main

EXAMPLES = Path(__file__).parents[2] / "example_notebooks" / "configs"
SYNTH_KEY = "sk_synth_CANARY_screen_aaaaaaaa_4321"
ENV_KEY = "sk_env_CANARY_screen_bbbbbbbbbb_8765"
CHAT = '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "hello"}]}\n'
#: a port nothing listens on: a question answered "no" must never get as far as connecting
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture()
def two_gepa(tmp_path: Path) -> Path:
    """The bundled GEPA example twice (the issue's 84 lines each), and the keys in the environment."""
    for name in ("a_gepa.toml", "b_gepa.toml"):
        shutil.copy(EXAMPLES / "banking_gepa.toml", tmp_path / name)
    return tmp_path


def _gepa_env() -> dict[str, str]:
    return clean_env(SYNTH_API_KEY=SYNTH_KEY, ENVIRONMENT_API_KEY=ENV_KEY, SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1")


@sizes
def test_two_gepa_jobs_fit_one_screen_and_esc_sends_nothing(two_gepa: Path, size: tuple[int, int]) -> None:
    columns, rows = size
    pane = Pane("submit", [*CLI, "train", "a_gepa.toml", "b_gepa.toml", "--backend", NOWHERE], two_gepa, size,
                _gepa_env())
    try:
        screen = pane.wait_for(lambda text: "Submit? [Y/n]" in text)
        assert pane.history_size() == 0, "the summary scrolled: part of it is off screen at Submit?"
        lines = screen.rstrip("\n").splitlines()
        assert len(lines) <= rows and all(len(line) <= columns for line in lines)
        for name in ("a_gepa.toml", "b_gepa.toml"):
            assert f"== {name}  (prompt_learning/gepa)" in screen
        assert screen.count("model:    gpt-4.1-mini") == 2 and "task app: http://127.0.0.1:8102" in screen
        assert "~1,256 rollouts, 16 at a time: rollout.budget 1000" in screen
        assert "train_seeds 0…79 (80)" in screen and "val_seeds 80…127 (48)" in screen
        assert "SYNTH_API_KEY ••••4321" in screen and "ENVIRONMENT_API_KEY ••••8765" in screen
        assert "2 jobs → http://127.0.0.1:9/api" in screen and "--verbose" in screen
        assert '"config_body"' not in screen and SYNTH_KEY not in screen and ENV_KEY not in screen

        pane.send_keys("maybe", "Enter")  # not an answer: asked again
        pane.wait_for(lambda text: "answer y (or Enter) to submit, n or Esc to send nothing" in text
                      and text.rstrip().endswith("Submit? [Y/n]"))
        pane.send_keys("Escape")
        whole = pane.finished()
        assert pane.exit_status() == 130
        assert "Esc: nothing was sent" in whole and "connecting to" not in whole
    finally:
        pane.close()


def test_yes_prints_the_summary_and_verbose_the_whole_payload(tmp_path: Path, fake_backend: Any,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    (tmp_path / "train.jsonl").write_text("".join(CHAT % i for i in range(3)))
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    assert main(["train", "sft.toml", "--backend", fake_backend.url, "-y", "--no-poll"]) == 0
    compact = capsys.readouterr().err
    assert "== sft.toml  (sft)" in compact and "data:     train.jsonl (" in compact and "1 job → " in compact
    assert "model:    Qwen/Qwen3-0.6B" in compact and '"model"' not in compact
    assert main(["train", "sft.toml", "--backend", fake_backend.url, "-y", "--no-poll", "--verbose"]) == 0
    full = capsys.readouterr().err
    assert '"model": "Qwen/Qwen3-0.6B"' in full and "uploads train.jsonl (" in full and "1 job → " in full
    assert fake_backend.api_key not in compact + full and len(fake_backend.state.jobs) == 2


@sizes
def test_job_id_captured_from_a_terminal_is_the_id_alone(tmp_path: Path, fake_backend: Any, size: tuple[int, int],
                                                          children: list) -> None:
    """``JOB=$(synth-nb train … --no-poll)`` typed in a terminal: stdin is one, stdout is not, so nothing is asked,
    the summary and the sentence go to the terminal (stderr) and ``$JOB`` holds the id alone."""
    (tmp_path / "train.jsonl").write_text("".join(CHAT % i for i in range(3)))
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    line = f'JOB=$({shlex.join([*CLI, "train", "sft.toml", "--backend", fake_backend.url, "--no-poll"])}) && ' \
           'printf "<%s>\\n" "$JOB"'
    child = pexpect.spawn("bash", ["-c", line], cwd=str(tmp_path), env=clean_env(SYNTH_API_KEY=fake_backend.api_key),
                          encoding="utf-8", dimensions=(size[1], size[0]), timeout=WAIT)
    children.append(child)
    child.expect(r"submitted sft job (\S+) to ")
    job_id = child.match.group(1)
    child.expect_exact(f"<{job_id}>")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Submit?" not in str(child.before)
    assert list(fake_backend.state.jobs) == [job_id]


def test_every_bundled_config_sums_up_in_a_few_rows_of_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth_nb.pipeline import actions
    from synth_nb.pipeline.preview import compact_text
    from synth_nb.pipeline.request import Request

    for name, value in _gepa_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(EXAMPLES.parent)
    configs = sorted(EXAMPLES.glob("*.toml"))
    batch = actions.prepare(Request(folder=EXAMPLES.parent, configs=configs, backend=NOWHERE),
                            actions.Hooks(say=lambda _: None))
    batch.raise_problems()
    text = compact_text(batch.prepared, backend_url=NOWHERE, width=80)
    blocks = text.split("== ")[1:]
    assert len(blocks) == len(configs) and all(len(line) <= 80 for line in text.splitlines())
    assert all(len(block.splitlines()) <= 9 for block in blocks), text
    assert "(…)" not in text.split("banking_mipro_real_llm")[0]  # a term is shortened only when it cannot fit
    assert "data:     data/sft_tiny_train.jsonl (17.5 KiB) ·" in text and "data/sft_tiny_val.jsonl (4.7 KiB)" in text


# -- a replayed SFT job: the parent of a re-run, and what --tui and --report-to show ----------------------


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, str, str]]:
    """(backend, folder, parent job id, what its ``--report-to tensorboard`` run printed on stdout)."""
    folder = tmp_path_factory.mktemp("replayed")
    (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(5)))
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    with replay_backend(50) as backend, pytest.MonkeyPatch.context() as patch:
        (folder / ".env").write_text(f"SYNTH_API_KEY={backend.api_key}\n")
        patch.chdir(folder)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["train", "-c", "sft.toml", "--backend", backend.url, "--report-to", "tensorboard"]) == 0
        text = out.getvalue()
        parent = text.split("submitted sft job ", 1)[1].split()[0]
        yield backend, folder, parent, text


def _sft_jobs(backend: Any) -> int:
    answer = httpx.get(f"{backend.url}/api/learning/jobs", headers={"Authorization": f"Bearer {backend.api_key}"},
                       timeout=WAIT)
    answer.raise_for_status()
    body = answer.json()
    return len(body.get("jobs", body) if isinstance(body, dict) else body)


def test_report_to_says_where_it_wrote_and_how_to_look(replayed: tuple[Any, Path, str, str]) -> None:
    _, folder, parent, out = replayed
    (line,) = [line for line in out.splitlines() if line.startswith("report: ")]
    assert re.fullmatch(rf"report: tensorboard holds [1-9]\d* points of job {parent} in runs/{parent} · "
                        r"view: tensorboard --logdir runs", line), line
    assert (folder / "runs" / parent).is_dir()


@sizes
def test_a_rerun_on_a_terminal_asks_and_esc_sends_nothing(replayed: tuple[Any, Path, str, str],
                                                          size: tuple[int, int], children: list) -> None:
    backend, folder, parent, _ = replayed
    before = _sft_jobs(backend)
    child = spawn(["train", "--rerun", parent, "--backend", backend.url], folder, size,
                  clean_env(SYNTH_API_KEY=backend.api_key), children)
    child.expect(f"diff against job {parent}: none")
    child.expect_exact("1 job → ")
    child.expect_exact("Submit? [Y/n]")
    child.send("maybe" + ENTER)
    child.expect_exact("answer y (or Enter) to submit, n or Esc to send nothing")
    child.expect_exact("Submit? [Y/n]")
    child.send(ESC)
    child.expect_exact("Esc: nothing was sent")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "submitted" not in str(child.before) and _sft_jobs(backend) == before


@sizes
def test_synth_ai_tui_draws_the_live_chart_and_report_to_says_where(replayed: tuple[Any, Path, str, str],
                                                                    size: tuple[int, int], children: list) -> None:
    backend, folder, _, _ = replayed
    child = spawn(["train", "sft.toml", "--tui", "-y", "--backend", backend.url, "--report-to", "tensorboard"],
                  folder, size, clean_env(SYNTH_API_KEY=backend.api_key), children)
    child.expect(r"submitted sft job (\S+)")
    job_id = child.match.group(1)
    child.expect_exact("╭")  # the live panel, as --stream-format chart draws it
    child.expect_exact("report: tensorboard holds ")
    child.expect_exact(f"of job {job_id} in runs/{job_id}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
