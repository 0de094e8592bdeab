"""``%synth_train --report-to tensorboard``: the magic reports every job it follows, from its first point,
into ``--report-dir`` under the notebook's folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import MINIMAL_SFT
from trackers import as_float32, job_series, tensorboard_series

from synth_nb import pipeline


@pytest.fixture()
def embedded() -> Iterator[Any]:
    from synth_nb.local import start_backend

    backend = start_backend(default_executor="replay", executor_options={"replay": {"speed": 50}})
    pipeline.use_local_backend(backend)
    yield backend
    pipeline.stop_local_backend()


def test_the_magic_reports_the_job_it_follows(ip: Any, embedded: Any, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "nb"
    folder.mkdir()
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    rows = [{"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]}
            for i in range(4)]
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setitem(ip.user_ns, "__session__", str(folder / "train.ipynb"))
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")
    monkeypatch.chdir(tmp_path)
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --report-to tensorboard "
                                           "--report-dir tb")  # headless: blocks until the job ends
    assert job.done and job.status == "succeeded"
    expected = job_series(job)
    assert expected and tensorboard_series(folder / "tb" / job.id) == as_float32(expected)
    assert "warning" not in capsys.readouterr().err
