"""Run-health warnings, both ways: each fires on a crafted recording that shows it, and on every door (the final
block ``synth-nb attach`` prints, the bundle's ``summary.md`` and ``run.json``, the notebook panel's status
that ``%synth_train --attach`` shows, and the lines it prints where no widget front end draws); none fires on
the bundled recordings' healthy runs.

The recordings (``health_recordings``) are replayed by the embedded backend's replay executor over HTTP, the
way ``--record`` recordings are; the bundled examples' real runs are checked for silence where they run
(``tests/pipeline/test_estimate_vs_real.py``), and the hosted shapes where they are attached to
(``test_replay_shapes.py``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from health_recordings import EXPECTED, write_recordings

from synth_nb.cli.main import main
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import JobRecord, JobRegistry
from synth_nb.job.registry import RUNS_DIR
from synth_nb.pipeline.bundle import RunRecord

#: the flow of each crafted recording, by its name's prefix
FLOWS = {"rl": "rl", "sft": "sft", "pl": "prompt_learning"}
#: the headline each warning shows (every door says it)
HEADLINES = {
    "rl.eval_falls": "the eval reward falls while the training reward rises",
    "rl.length_drift": "completions grow while the reward rises",
    "rl.zero_variance": "many groups had no reward spread (no learning signal)",
    "rl.collapse": "the same completion wins across many seeds",
    "sft.overfitting": "overfitting from step 60: the validation loss rises while the train loss falls",
    "sft.flat_loss": "the loss is not falling",
    "pl.search_only_gain": "the best prompt wins on the search's seeds but not on held-out seeds",
    "pl.few_proposals": "the budget bought too few proposals to search with",
}
#: a figure of each warning's evidence, with the steps it names
EVIDENCE = {
    "rl.eval_falls": "eval reward 0.5 → 0.42 → 0.35 at steps 10, 20, 30 (3 evaluations",
    "rl.length_drift": "mean completion length 9.5 → 22 tokens (×2.3) over steps 1–30",
    "rl.zero_variance": "90 of 120 groups (75%) over steps 1–30 had every reward equal",
    "rl.collapse": "was the best of 20 of 20 groups at steps 26–30, on 20 different seeds",
    "sft.overfitting": "validation loss 1.1 at step 60 (its lowest) → 1.4 at step 100",
    "sft.flat_loss": "train loss 2.002 at the start and 1.998 at the end over steps 1–40",
    "pl.search_only_gain": "best 0.8 vs baseline 0.5 on the search's seeds (+0.3), but 0.66 vs 0.7 on 32 held-out",
    "pl.few_proposals": "used its budget (budget_exhausted: 8 of 8 rollouts) having made 1 proposal (fewer than 3)",
}


@pytest.fixture(scope="module")
def replayer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One embedded backend for the module, serving the crafted recordings."""
    from synth_nb.local import start_backend

    recordings = write_recordings(tmp_path_factory.mktemp("health-recordings"))
    with start_backend(port=0, executor_options={"replay": {"recordings_dir": str(recordings)}}) as backend:
        yield backend


def _replay(backend: Any, flow: str, recording: str) -> str:
    """A job replaying ``recording`` (at 100x), created over HTTP; its id."""
    async def create() -> str:
        async with AsyncSynthClient(backend.url, backend.api_key) as client:
            endpoints = get_flow(flow).endpoints
            body = {"metadata": {"local_executor": "replay", "recording": recording, "replay_speed": 100}}
            doc = await client.create_job(endpoints, body)
            job_id = str(doc.get("id") or doc.get("job_id"))
            if endpoints.start:
                await client.start(endpoints, job_id)
            return job_id

    return asyncio.run(create())


def _submitted_here(folder: Path, backend: Any, flow: str, job_id: str) -> Path:
    """Remember the job as submitted from ``folder``, so whoever follows it to its end writes its bundle."""
    url = f"{backend.url}/api"
    JobRegistry(folder).record(JobRecord(job_id=job_id, flow=flow, backend_url=url))
    RunRecord(folder=folder / RUNS_DIR, flow=flow, algorithm=None, plan={}, backend_url=url).save(job_id)
    return folder / RUNS_DIR / job_id


@pytest.fixture()
def working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replayer: Any) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", replayer.api_key)
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)
    return tmp_path


@pytest.mark.parametrize("recording", sorted(EXPECTED))
def test_each_warning_fires_on_its_recording_in_the_final_block_summary_and_run_json(
        recording: str, replayer: Any, working: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flow, code = FLOWS[recording.split("_", 1)[0]], EXPECTED[recording]
    job_id = _replay(replayer, flow, recording)
    bundle = _submitted_here(working, replayer, flow, job_id)
    assert main(["attach", job_id, "--backend", replayer.url, "--poll-interval", "0.2"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("Final status:"):]
    warnings = [line for line in block.splitlines() if line.startswith("  warning:")]
    assert len(warnings) == 1, block  # its own warning, and no other
    assert f"  warning:  {HEADLINES[code]}" in warnings[0] and EVIDENCE[code] in warnings[0]
    run = json.loads((bundle / "run.json").read_text(encoding="utf-8"))
    (health,) = run["health"]
    assert health["code"] == code and health["headline"].startswith(HEADLINES[code]) and health["series"]
    assert health["steps"] or code == "pl.few_proposals"  # a proposal count has no step of its own
    summary = (bundle / "summary.md").read_text(encoding="utf-8")
    assert "| Warning | " in summary and HEADLINES[code].split(" (")[0] in summary


class StatusOutputs:
    """The last bundle each display id showed."""

    def __init__(self) -> None:
        self.shown: dict[str, dict[str, Any]] = {}

    def display(self, obj: Any, raw: bool = False, display_id: Any = None, **_: Any) -> None:
        if isinstance(display_id, str) and isinstance(obj, dict):
            self.shown[display_id] = obj

    def update_display(self, obj: Any, *, display_id: str, **_: Any) -> None:
        if isinstance(obj, dict):
            self.shown[display_id] = obj


@pytest.mark.parametrize("recording", ["rl_collapse", "sft_overfitting", "pl_search_only_gain"])
def test_the_panel_status_shows_the_warning_with_its_evidence(
        recording: str, replayer: Any, working: Path, ip: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import IPython.display

    outputs = StatusOutputs()
    monkeypatch.setattr(IPython.display, "display", outputs.display)
    monkeypatch.setattr(IPython.display, "update_display", outputs.update_display)
    flow, code = FLOWS[recording.split("_", 1)[0]], EXPECTED[recording]
    job_id = _replay(replayer, flow, recording)
    job = ip.run_line_magic("synth_train", f"--attach {job_id} --backend {replayer.url}")
    assert job.status == "succeeded"
    (status,) = [bundle for key, bundle in outputs.shown.items() if key.endswith("-status")]
    text, html = str(status["text/plain"]), str(status["text/html"])
    assert f"! warning: {HEADLINES[code]}" in text and EVIDENCE[code] in text
    assert f"<div class='synth-health' data-code='{code}'>" in html
    assert text.count("warning:") == 1  # said once: not again among the ending's rows
    printed = capsys.readouterr().out  # no widget front end here: the panel also prints its final lines
    assert f"  warning: {HEADLINES[code]}" in printed[printed.index("Final status:"):]


@pytest.mark.parametrize("recording", ["rl", "sft", "gepa", "mipro"])
def test_no_warning_fires_on_the_bundled_recordings(recording: str, replayer: Any, working: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    flow = {"gepa": "prompt_learning", "mipro": "prompt_learning"}.get(recording, recording)
    job_id = _replay(replayer, flow, recording)
    bundle = _submitted_here(working, replayer, flow, job_id)
    assert main(["attach", job_id, "--backend", replayer.url, "--poll-interval", "0.2"]) == 0
    assert "warning:" not in capsys.readouterr().out
    assert json.loads((bundle / "run.json").read_text(encoding="utf-8"))["health"] == []
