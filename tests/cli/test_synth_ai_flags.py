"""A script written for ``synth-ai train`` (0.2.24) runs, or is told in one line exactly what to change: each of
0.2.24's flags is accepted with its nearest meaning or refused (exit 2) naming the flag to use; ``--help`` shows
each flag's default as 0.2.24's does; ``%synth_train`` takes the same flags from the same table.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_SFT

from synth_nb.cli.main import main
from synth_nb.pipeline.flags import SYNTH_AI_FLAGS, build_train_parser
from synth_nb.pipeline.request import Request

#: every option of synth-ai 0.2.24's ``train`` (its reference's table), as typed
SYNTH_AI_0_2_24 = ("--env", "--task-url", "--dataset", "--model", "--allow-experimental", "--no-allow-experimental",
                   "--idempotency", "--dry-run", "--poll", "--no-poll", "--poll-timeout", "--poll-interval",
                   "--stream-format", "--examples", "--local-backend", "--tui", "--show-curve", "--verbose-summary")


def _request(*argv: str) -> Request:
    return Request.from_args(build_train_parser().parse_args(list(argv)), Path.cwd(), anchor=False)


def test_every_synth_ai_flag_is_a_flag_here() -> None:
    known = build_train_parser()._option_string_actions
    assert [flag for flag in SYNTH_AI_0_2_24 if flag not in known] == []


def test_tui_is_the_live_chart_and_the_summary_flags_are_what_is_always_shown() -> None:
    assert _request("x.toml", "--tui").stream_format == "chart"
    assert _request("x.toml", "--tui", "--stream-format", "chart").stream_format == "chart"
    assert _request("x.toml", "--tui", "--no-poll").ignored == [
        "--tui is ignored with --no-poll: no job is followed, so nothing is drawn"]
    plain = _request("x.toml")
    assert _request("x.toml", "--show-curve", "--verbose-summary") == plain


@pytest.mark.parametrize(("argv", "said"), [
    (["--local-backend"], "error: --local-backend is synth-ai 0.2.24's flag, which did nothing there: use "
                          "--backend local for the embedded local backend (or --backend URL)"),
    (["--local-backend", "--backend", "local"], "error: --local-backend is synth-ai 0.2.24's flag, which did "
                                                "nothing there: drop it: --backend already says where jobs go"),
    (["--tui", "--stream-format", "cli"], "error: --tui is --stream-format chart, and --stream-format cli asks for "
                                          "another display: drop one of them"),
])
def test_a_flag_that_cannot_mean_what_it_meant_is_one_line_and_exit_2(
        argv: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    assert main(["train", "sft.toml", *argv]) == 2
    out, err = capsys.readouterr()
    assert err == said + "\n" and out == ""


def test_help_shows_each_default_as_synth_ai_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # as one line: argparse wraps to the terminal
    assert re.search(r"--poll-timeout SECONDS Stop watching [^\[]*\[default: 3600\]", text)
    helps = {a.option_strings[0]: a.help or "" for a in build_train_parser()._actions if a.option_strings}
    for flag, default in (("--poll-timeout", "3600"), ("--poll-interval", "5"), ("--poll", "--poll"),
                          ("--max-minutes", "no limit"), ("--model", "the config's value"),
                          ("--rollout-budget", "the config's value"), ("--backend", "$SYNTH_BACKEND_OVERRIDE"),
                          ("--stream-format", "cli on a terminal, quiet off it")):
        assert f"[default: {default}" in " ".join(helps[flag].split()), flag
    for spec in SYNTH_AI_FLAGS:
        assert spec.flags[0] in text


def test_the_magic_takes_the_same_flags_with_the_same_help() -> None:
    """``%synth_train`` builds its parser from the same table: the new flags and their defaults come with it."""
    from synth_nb.notebook.magics import _parser

    magic = {a.option_strings[0]: a.help for a in _parser()._actions if a.option_strings}
    cli = {a.option_strings[0]: a.help for a in build_train_parser()._actions
           if a.option_strings and not isinstance(a, argparse._HelpAction)}
    assert magic == cli
    assert "[default: 3600]" in str(magic["--poll-timeout"]) and "--tui" in magic and "--verbose" in magic
