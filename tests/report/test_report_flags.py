"""The report flags on ``synth-nb train``, ``synth-nb attach`` and ``%synth_train``, and the one clear error when
a tracker's library (the ``report`` extra) is missing: exit 2 before anything is sent, never a traceback."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

from synth_nb.cli import attach
from synth_nb.cli.main import main
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.pipeline.flags import build_train_parser
from synth_nb.pipeline.request import Request
from synth_nb.report import ReportOptions


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code or 0)


@pytest.mark.parametrize("missing", ["mlflow", "tensorboard", "wandb", "trackio"])
def test_a_missing_tracker_library_is_one_line_and_exit_2(missing: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, missing, None)  # what an install without the extra finds
    assert _exit_code(["train", "--report-to", "tensorboard,mlflow,wandb,trackio", "--backend",
                       "http://127.0.0.1:9"]) == 2
    assert _exit_code(["attach", "job_1", "--report-to", "trackio,wandb,mlflow,tensorboard"]) == 2
    err = capsys.readouterr().err
    assert f"needs {missing}, which is not installed: pip install 'synth-nb[report]'" in err
    assert "Traceback" not in err and not list(tmp_path.iterdir())


def test_report_to_on_a_job_without_the_extra_raises_a_config_error(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    job = Job("job_1", "sft", AsyncSynthClient("http://127.0.0.1:9", "sk_test_key_0000"),
              endpoints=get_flow("sft").endpoints)
    with pytest.raises(ConfigError, match=r"\[report-to\]: --report-to mlflow needs mlflow.*synth-nb\[report\]"):
        job.report_to("tensorboard", "mlflow", report_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # checked before anything is written
    with pytest.raises(ConfigError, match="unknown tracker 'comet'; expected tensorboard or mlflow or wandb or trackio"):
        job.report_to("comet")


def test_an_unknown_tracker_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["train", "--report-to", "tensorboard,comet"]) == 2
    assert ("argument --report-to: unknown tracker 'comet'; expected tensorboard, mlflow, wandb, trackio"
            in capsys.readouterr().err)


def test_the_flags_reach_the_cli_attach_and_the_magic(tmp_path: Path) -> None:
    argv = ["--report-to", "MLflow, tensorboard,mlflow", "--report-dir", "out", "--mlflow-experiment", "sweep"]
    request = Request.from_args(build_train_parser().parse_args(argv), tmp_path)
    assert request.report == ReportOptions(("mlflow", "tensorboard"), tmp_path / "out", "sweep")
    parser = argparse.ArgumentParser()
    attach.configure(parser)
    assert ReportOptions.from_values(vars(parser.parse_args(["job_1", *argv]))) == ReportOptions(
        ("mlflow", "tensorboard"), Path("out"), "sweep")
    assert ReportOptions.from_values(vars(build_train_parser().parse_args([]))) == ReportOptions()


@pytest.mark.parametrize(("argv", "said"), [
    (["--report-dir", "out"], "[report-dir]: --report-dir is only used with --report-to TRACKERS"),
    (["--report-to", "tensorboard", "--mlflow-experiment", "x"],
     "[mlflow-experiment]: --mlflow-experiment is only used with --report-to mlflow"),
])
def test_a_report_flag_that_would_be_ignored_is_exit_2(argv: list[str], said: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", "sk_test_report_flags_0000")
    assert main(["attach", "job_1", "--backend", "http://127.0.0.1:9", *argv]) == 2
    assert said in capsys.readouterr().err
    with pytest.raises(ConfigError, match=re.escape(said)):
        Request.from_args(build_train_parser().parse_args(argv), tmp_path)
