"""``attach``'s sample flags: a narrowing flag without ``--rollouts``/``--samples`` is an error (exit 2) that
says what to add, not silently ignored while the job is followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.cli.main import main


@pytest.mark.parametrize("flags", [["--step", "3"], ["--worst", "2"], ["--best", "1", "--step", "0"]])
def test_a_narrowing_flag_alone_says_to_add_rollouts_or_samples(flags: list[str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["attach", "job_abc123", "--backend", "http://127.0.0.1:9", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --") and flags[0] in err.splitlines()[0] and "add --rollouts (RL) or --samples (SFT)" in err
    assert "Traceback" not in err


def test_rollouts_and_samples_are_one_or_the_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["attach", "job_abc123", "--rollouts", "--samples"])
    assert ended.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
