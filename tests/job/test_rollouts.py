"""The rollouts behind an RL job's numbers, from a real GRPO job on the embedded backend (the bundled
charclass task app, the tiny model): the view, the DataFrame, the bundle's ``rollouts.jsonl`` and
``synth-nb attach --rollouts`` in a terminal, all reading the ``rl.rollout.sampled`` events over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest
from minimal_configs import TINY_RL
from terminal_session import clean_env, spawn

from synth_nb.cli.main import main
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.job import Job

pytestmark = pytest.mark.torch

ENV_KEY = "sk_env_CANARY_rollouts_bbbbbb_4242"
@dataclass
class Ran:
    folder: Path
    url: str
    api_key: str
    job_id: str


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    """One real RL job, submitted with ``synth-nb train`` from a folder (so it leaves a bundle)."""
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    folder = tmp_path_factory.mktemp("rollouts")
    with start_task_app("charclass", api_key=ENV_KEY) as app, \
            start_backend(port=0, environment_api_key=ENV_KEY) as backend, pytest.MonkeyPatch.context() as env:
        (folder / "rl.toml").write_text(TINY_RL.format(task_url=app.url), encoding="utf-8")
        env.chdir(folder)
        env.setenv("SYNTH_API_KEY", backend.api_key)
        env.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
        assert main(["train", "-c", "rl.toml", "--backend", backend.url, "--yes", "--poll-timeout", "600",
                     "--stream-format", "cli"]) == 0
        [bundle] = (folder / ".synth_nb" / "runs").iterdir()
        yield Ran(folder, backend.url, backend.api_key, bundle.name)


def _rebuilt(ran: Ran) -> Job:
    async def refresh() -> Job:
        client = AsyncSynthClient(f"{ran.url}/api", ran.api_key)
        job = Job(ran.job_id, "rl", client, endpoints=get_flow("rl").endpoints)
        await job.refresh()
        await client.aclose()
        return job

    return asyncio.run(refresh())


def test_the_bundle_holds_every_sampled_rollout(ran: Ran) -> None:
    bundle = ran.folder / ".synth_nb" / "runs" / ran.job_id
    rows = [json.loads(line) for line in (bundle / "rollouts.jsonl").read_text().splitlines()]
    assert [(r["phase"], r["step"]) for r in rows] == [("eval", 0)] * 2 + [("train", 1)] * 4 + [("train", 2)] * 4 + [
        ("eval", 2)] * 2
    assert all(r["prompt"].startswith("user: ") and r["completion_tokens"] >= 1 for r in rows)
    assert {tuple(r["reward_components"]) for r in rows} == {("filled", "in_class")}
    assert "`rollouts.jsonl`" in (bundle / "README.md").read_text()
    assert ENV_KEY not in (bundle / "rollouts.jsonl").read_text()


def test_the_rollout_view_puts_the_latest_steps_best_and_worst_first_and_filters(ran: Ran) -> None:
    job = _rebuilt(ran)
    table = job.rollouts()
    assert table.summary_line() == f"RL rollouts of job {job.id}: 12 sampled, steps 0–2"
    (best_label, best), *worst = table.highlights
    assert best_label == "Best of step 2 (by reward)" and {r["step"] for r in best} == {2}
    assert [r["reward"] for r in best] == sorted((r["reward"] for r in best), reverse=True)
    html = table.to_html()
    assert html.count("<details>") == 12 + len(best) + sum(len(rows) for _, rows in worst)
    assert "user: " in html and "reward parts" in html
    frame = job.rollouts_df()
    assert len(frame) == 12 and {"step", "seed", "prompt", "completion", "reward", "advantage"} <= set(frame)
    train2 = job.rollouts(2, phase="train").rows
    assert len(train2) == 4 and {r["seed"] for r in train2} == {1}  # the first group of step 2: one seed (batch 1)
    worst2 = job.rollouts(worst=2).rows
    assert [r["reward"] for r in worst2] == sorted(r["reward"] for r in table.rows)[:2]
    assert all(r["reward"] >= 0.1 for r in job.rollouts(min_reward=0.1).rows)
    with pytest.raises(ConfigError, match=r"has no samples; its samples: job\.rollouts\(\)"):
        job.samples()


def test_attach_rollouts_lists_them_in_a_terminal(ran: Ran, tmp_path: Path) -> None:
    children: list[Any] = []
    child = spawn(["attach", ran.job_id, "--backend", ran.url, "--rollouts", "--step", "2", "--worst", "2"],
                  tmp_path, (80, 24), clean_env(SYNTH_API_KEY=ran.api_key), children)
    child.expect(r"12 sampled, steps 0–2; 2 shown \(step 2, worst 2\)")
    child.expect("── step 2 · phase (train|eval) · seed")
    child.expect("completion")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
