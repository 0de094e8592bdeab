"""``%synth_train``: flags shared with the CLI, help, headless preview, cell configs, submission."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wizard_support import CANARIES, GEPA
from IPython.core import magic_arguments
from IPython.core.error import UsageError

from synth_nb import pipeline
from synth_nb.notebook.magics import CELL_CONFIG_PREFIX
from synth_nb.pipeline.flags import TRAIN_ARGUMENTS, build_train_parser


def magic(ip: Any) -> Any:
    return ip.find_line_magic("synth_train")


@pytest.mark.parametrize("line", [
    "",
    "--config a.toml -c b.toml --env-file x.env --backend local --yes --wait",
    "--model Qwen/Qwen3-4B --dataset d.jsonl --examples 5 --task-url http://127.0.0.1:1 --idempotency k",
    "--no-poll --poll-interval 1.5 --poll-timeout 30 --stream-format chart --allow-experimental",
    "--attach job_123 --record run.jsonl",
    "--jobs --dry-run --json --no-allow-experimental --modal-secret team",
])
def test_magic_parses_exactly_like_the_cli(ip: Any, line: str) -> None:
    parsed = magic_arguments.parse_argstring(magic(ip), line)
    assert vars(parsed) == vars(build_train_parser().parse_args(shlex.split(line)))


def test_help_opens_with_what_it_does_and_examples_and_lists_every_cli_flag(ip: Any) -> None:
    doc = magic(ip).__doc__
    assert doc.startswith("%synth_train: validate, preview and submit")
    assert "::" not in doc and "``" not in doc  # plain text, not reStructuredText
    assert "Examples:\n  %synth_train " in doc and "--attach pl_" in doc and "Usage:\n  %synth_train [" in doc
    for spec in TRAIN_ARGUMENTS:
        for flag in spec.flags:  # a positional argument shows as its metavar
            assert (flag if flag.startswith("-") else spec.kwargs["metavar"]) in doc
    assert "Training TOML" in doc


def test_bad_flags_raise_usage_error(ip: Any) -> None:
    with pytest.raises(UsageError):
        ip.run_line_magic("synth_train", "--examples many")
    with pytest.raises(UsageError):
        ip.run_line_magic("synth_train", "--stream-format fancy")


def test_headless_without_yes_prints_a_masked_preview_and_sends_nothing(
        ip: Any, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = ip.run_line_magic("synth_train", "--config gepa.toml --backend http://127.0.0.1:9")
    out = capsys.readouterr().out
    assert result is None
    assert "gepa.toml  (prompt_learning/gepa)" in out and '"task_app_url": "http://127.0.0.1:8102"' in out
    assert "ENVIRONMENT_API_KEY: ••••" in out and "Nothing was sent" in out and "--yes" in out
    for canary in CANARIES:
        assert canary not in out


def test_dry_run_returns_the_plans(ip: Any, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plans = ip.run_line_magic("synth_train", "-c gepa.toml -c sft.toml --dry-run --backend http://127.0.0.1:9")
    assert [p.flow for p in plans] == ["prompt_learning", "sft"]
    assert "Nothing was sent" not in capsys.readouterr().out


def test_dry_run_json_prints_the_masked_previews(ip: Any, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    ip.run_line_magic("synth_train", "-c gepa.toml --dry-run --json --backend http://127.0.0.1:9")
    out = capsys.readouterr().out
    (preview,) = json.loads(out)
    assert preview["flow"] == "prompt_learning" and preview["steps"][0]["path"] == "/prompt-learning/online/jobs"
    for canary in CANARIES:
        assert canary not in out


def test_without_config_headless_previews_every_valid_config(ip: Any, project: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("synth_train", "--backend http://127.0.0.1:9")
    out = capsys.readouterr().out
    assert "== gepa.toml" in out and "== sft.toml" in out and "broken.toml" not in out


def test_invalid_config_with_yes_reports_the_error_as_usage_error(ip: Any, project: Path) -> None:
    with pytest.raises(UsageError, match="trainer_mode"):
        ip.run_line_magic("synth_train", "-c broken.toml --yes --backend http://127.0.0.1:9")


def test_invalid_config_error_is_shown_once_naming_file_key_and_line(
        ip: Any, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = ip.run_cell("%synth_train -c broken.toml --yes --backend http://127.0.0.1:9")
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert isinstance(result.error_in_exec, UsageError)
    assert "Traceback" not in shown
    assert shown.count("trainer_mode is required") == 1, shown
    assert shown.count("invalid RL config") == 1, shown
    assert "broken.toml:6 [model.trainer_mode]" in shown


def test_without_config_headless_needs_exactly_one_valid_config(ip: Any, project: Path) -> None:
    with pytest.raises(UsageError, match=r"3 training configs found under .* \(2 valid, 1 invalid\)"):
        ip.run_line_magic("synth_train", "--yes")


def test_cell_magic_writes_the_body_next_to_the_notebook(ip: Any, project: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    plans = ip.run_cell_magic("synth_train", "--dry-run --backend http://127.0.0.1:9", GEPA)
    written = list(project.glob(f"{CELL_CONFIG_PREFIX}*.toml"))
    assert len(written) == 1 and written[0].read_text() == GEPA
    assert plans[0].config_path == written[0]
    ip.run_cell_magic("synth_train", "--dry-run --backend http://127.0.0.1:9", GEPA)
    assert list(project.glob(f"{CELL_CONFIG_PREFIX}*.toml")) == written  # same body, same file
    capsys.readouterr()


def test_with_a_widget_front_end_the_magic_returns_the_wizard(ip: Any, project: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from synth_nb.notebook.wizard import Wizard

    monkeypatch.setenv("SYNTH_NB_WIDGETS", "1")
    wizard = ip.run_line_magic("synth_train", "-c sft.toml --examples 2 --backend http://127.0.0.1:9")
    assert isinstance(wizard, Wizard)
    assert wizard.selected == ["sft.toml"] and wizard.overrides["examples"] == 2
    assert Wizard.latest is wizard


def test_wait_with_the_wizard_says_what_it_can_and_cannot_do(ip: Any, project: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.notebook.wizard import Wizard

    monkeypatch.setenv("SYNTH_NB_WIDGETS", "1")
    capsys.readouterr()
    wizard = ip.run_line_magic("synth_train", "-c sft.toml --wait --backend http://127.0.0.1:9")
    assert isinstance(wizard, Wizard)
    out = capsys.readouterr().out
    assert out.startswith("--wait blocks the cell that submits, and the wizard submits after this cell has ended")
    assert "add --yes to submit from this cell and wait here" in out
    ip.run_line_magic("synth_train", "-c sft.toml --backend http://127.0.0.1:9")
    assert "--wait" not in capsys.readouterr().out


@pytest.fixture
def replay_backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    backend = start_backend(default_executor="replay", executor_options={"replay": {"speed": 50}})
    pipeline.use_local_backend(backend)
    yield backend
    pipeline.stop_local_backend()


def test_yes_submits_to_the_local_backend_waits_headless_and_lists_the_job(
        ip: Any, project: Path, replay_backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --record run.jsonl")
    out = capsys.readouterr().out
    assert f"submitted sft job {job.id}" in out
    assert job.done and job.status == "succeeded"
    from synth_nb.job import read_recording

    recording = read_recording(project / "run.jsonl")
    assert recording[0]["kind"] == "meta" and recording[0]["payload"]["job_id"] == job.id
    assert any(line["kind"] == "event" for line in recording)
    records = ip.run_line_magic("synth_train", "--jobs")
    assert [r.job_id for r in records] == [job.id]
    shown = ip.display_formatter.format(records)[0]  # what the cell shows: the table, not [JobRecord(...)]
    assert shown["text/html"].startswith("<table class='synth-jobs'>") and "JobRecord(" not in str(shown)
    assert job.id in shown["text/plain"]
    again = ip.run_line_magic("synth_train", f"--attach {job.id} --backend local")
    assert again.id == job.id and again.status == "succeeded"
    capsys.readouterr()


def test_no_poll_returns_right_after_submission(ip: Any, project: Path, replay_backend: Any,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    jobs = ip.run_line_magic("synth_train", "-c sft.toml -c gepa.toml --backend local --yes --no-poll")
    assert [j.flow for j in jobs] == ["sft", "prompt_learning"]
    assert all(j.id for j in jobs)
    capsys.readouterr()


@pytest.fixture
def slow_replay_backend() -> Iterator[Any]:
    """Replays the bundled SFT recording at a tenth of its speed: minutes, far beyond the test's timeout."""
    from synth_nb.local import start_backend

    backend = start_backend(default_executor="replay", executor_options={"replay": {"speed": 0.1}})
    pipeline.use_local_backend(backend)
    yield backend
    pipeline.stop_local_backend()


def test_poll_timeout_stops_watching_a_blocking_wait_and_the_job_keeps_running(
        ip: Any, project: Path, slow_replay_backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    from synth_nb.job import JobRegistry

    result = ip.run_cell("%synth_train -c sft.toml --backend local --yes --wait --poll-timeout 1")
    captured = capsys.readouterr()
    [record] = JobRegistry(project).list()
    job_id = record.job_id
    # the magic reports the JobTimeoutError as a one-line usage error: no traceback
    assert isinstance(result.error_in_exec, UsageError)
    message = str(result.error_in_exec)
    assert f"job {job_id} is still running after 1s" in message
    assert f"re-attach with: %synth_train --attach {job_id}" in message
    assert "Traceback" not in captured.out + captured.err
    # the panel's last frame says it stopped watching and how to come back
    assert f"stopped watching after 1 s; the job keeps running on the backend (re-attach with: " \
           f"%synth_train --attach {job_id})" in captured.out
    # the backend still runs the job; cancel it so the replay does not outlive the test
    api = httpx.Client(base_url=slow_replay_backend.url + "/api", timeout=30,
                       headers={"Authorization": f"Bearer {slow_replay_backend.api_key}"})
    with api:
        assert api.get(f"/learning/jobs/{job_id}").json()["status"] == "running"
        api.post(f"/learning/jobs/{job_id}/cancel").raise_for_status()


def test_unload_removes_the_magic() -> None:
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "synth_nb")
    shell.run_line_magic("unload_ext", "synth_nb")
    assert shell.find_line_magic("synth_train") is None
    shell.run_line_magic("load_ext", "synth_nb")
    assert shell.find_line_magic("synth_train") is not None


def test_a_misspelt_dotenv_key_is_named_under_the_magic(ip: Any, project: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".env").write_text(f"SYNTH_API_KEY={CANARIES[0]}\n\nENVIRONMENT_APIKEY={CANARIES[1]}\n")
    ip.run_cell("%synth_train -c gepa.toml --dry-run --backend http://127.0.0.1:9")
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert "ENVIRONMENT_API_KEY: MISSING" in shown
    assert f"found ENVIRONMENT_APIKEY: did you mean ENVIRONMENT_API_KEY (in {project / '.env'} line 3)?" in shown
    assert not any(c in shown for c in CANARIES)
