"""``QuietProgress``: where nobody watches live, a progress line each tenth of the work or every 30 s, never one
per update, none once the job has ended; the line names the metrics the flow's chart draws first."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from synth_nb.job.quiet import QuietProgress
from synth_nb.records import MetricPoint


@dataclass
class _Job:
    flow: str = "rl"
    id: str = "job_1"
    status: str = "running"
    status_doc: dict[str, Any] = field(default_factory=lambda: {"started_at": 1000.0})
    events: list[Any] = field(default_factory=list)
    metrics: list[MetricPoint] = field(default_factory=list)

    def step(self, done: int, total: int = 200) -> None:
        self.events.append(SimpleNamespace(data={"step": done, "total_steps": total}))


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_each_tenth_of_the_work_not_one_per_update() -> None:
    job, clock = _Job(), _Clock()
    quiet = QuietProgress(job, clock=clock, wall=lambda: 1000.0 + clock.now)
    lines = []
    for done in range(1, 201):  # 200 updates, 0.1 s apart: 20 s in all, no heartbeat due
        job.step(done)
        clock.now += 0.1
        line = quiet.poll()
        if line is not None:
            lines.append(line)
    assert len(lines) == 11 and quiet.lines == 11  # where it starts, then each tenth
    assert [line.split(" · ")[1] for line in lines] == ["1/200 steps (0%)", *(f"{20 * i}/200 steps ({10 * i}%)"
                                                                           for i in range(1, 11))]
    assert lines[1].startswith("running · 20/200 steps (10%) · elapsed 2.0 s · ETA 18 s")


def test_a_heartbeat_every_30_s_when_the_work_does_not_move_and_none_once_the_job_ended() -> None:
    job, clock = _Job(status_doc={}), _Clock()  # no start time known, no progress reported
    quiet = QuietProgress(job, clock=clock)
    said = []
    for _ in range(95):  # 95 s of updates, one a second
        clock.now += 1.0
        said.append(quiet.poll())
    lines = [line for line in said if line is not None]
    assert lines == ["running"] * 3 and [i for i, line in enumerate(said) if line] == [29, 59, 89]
    job.status = "succeeded"
    clock.now += 100
    assert quiet.poll() is None


def test_the_line_names_the_charted_metrics_first_and_the_final_block_every_one() -> None:
    job = _Job(metrics=[MetricPoint(name=name, step=4, value=value) for name, value in
                        (("train.kl", 0.1), ("train.loss", -0.2), ("eval.reward_mean", 0.5),
                         ("train.entropy", 1.5), ("train.reward_mean", 0.25))])
    job.step(4, 10)
    line = QuietProgress(job, wall=lambda: 1030.0).line()
    assert line == ("running · 4/10 steps (40%) · elapsed 30 s · ETA 45 s · "
                    "eval.reward_mean=0.5000 (step 4), train.reward_mean=0.2500 (step 4), train.kl=0.1000 (step 4)")
    job.status, job.status_doc = "succeeded", {"started_at": 1000.0, "finished_at": 1061.0}
    head, metrics = QuietProgress(job).final_lines()
    assert head == "Final status: succeeded · 4/10 steps · finished · elapsed 1 min 01 s"
    assert metrics.count("(step 4)") == 5
