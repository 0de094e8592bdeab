"""Line mode (``--stream-format cli``, the default): metric lines in step order and none after the final status,
and for SFT one ``progress:`` line with the step counter and tokens/s, as synth-ai 0.2.24's ``sft.progress``.

The journey trains a tiny SFT job for real on the embedded backend, in a terminal at 80×24 and 120×40.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pexpect
import pytest
from minimal_configs import MINIMAL_SFT
from terminal_session import clean_env, sizes, spawn

from synth_nb.cli.printer import LinePrinter
from synth_nb.client import AsyncSynthClient, EventRecord
from synth_nb.flows import get_flow
from synth_nb.job import Job, JobUpdate
from synth_nb.records import Event, MetricPoint

METRIC = re.compile(r"\[metric\] (\S+)=\S+ \(step=(\d+)\)")


def _sft_job() -> Job:
    return Job("job_lines", "sft", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("sft").endpoints)


def _metric(step: int, name: str = "train.loss") -> JobUpdate:
    return JobUpdate("metric", "running", metric=MetricPoint(name=name, step=step, value=1.0 / step))


def test_late_points_and_points_after_the_final_status_get_no_line() -> None:
    out = io.StringIO()
    printer = LinePrinter(_sft_job(), [], out=out, metric_every=0.0)
    for update in (_metric(10), _metric(12), _metric(5), _metric(3, "val.loss"),  # a page, then older points
                   JobUpdate("status", "succeeded"), _metric(14)):
        printer(update)
    lines = out.getvalue().splitlines()
    steps = [int(m.group(2)) for line in lines if (m := METRIC.search(line))]
    assert steps == [10, 12, 3]
    assert lines[-1].endswith("status=succeeded")


def test_a_hidden_progress_event_is_one_progress_line_with_the_counter_and_tokens_per_second() -> None:
    out = io.StringIO()
    printer = LinePrinter(_sft_job(), [], out=out)
    data = {"step": 40, "total_steps": 192, "loss": 2.224, "tokens_per_second": 1976.4}
    printer(JobUpdate("event", "running", event=Event(seq=5, type="sft.progress", message="x", data=data)))
    printer(JobUpdate("event", "running", event=Event(seq=6, type="sft.progress", message="x",
                                                      data={**data, "step": 43})))  # within PROGRESS_EVERY
    (line,) = out.getvalue().splitlines()
    assert line.endswith("progress: 40/192 steps (21%) · loss 2.2240 · 1,976 tokens/s")


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    rows = "".join(f'{{"messages": [{{"role": "user", "content": "say hi number {i}"}}, '
                   f'{{"role": "assistant", "content": "hi {i}"}}]}}\n' for i in range(40))
    (tmp_path / "train.jsonl").write_text(rows)
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT + "\n[hyperparameters]\nn_epochs = 6\nbatch_size = 4\n"
                                       "sequence_length = 64\n")
    return tmp_path


@pytest.mark.torch
@sizes
def test_sft_lines_in_step_order_with_one_progress_line(project: Path, children: list, size: tuple[int, int]) -> None:
    child = spawn(["train", "sft.toml", "--backend", "local", "--yes"], project, size, clean_env(), children)
    child.expect(pexpect.EOF, timeout=600)
    child.close()
    said = child.before.replace("\r\n", "\n")
    assert child.exitstatus == 0, said
    lines = said.splitlines()
    progress = [line for line in lines if "] progress: " in line]
    assert progress and all(re.search(r"progress: \d+/60 steps \(\d+%\) · loss [\d.]+ · [\d,]+ tokens/s$", line)
                            for line in progress), progress
    assert progress[-1].split("] ", 1)[1].startswith("progress: 60/60 steps (100%)")
    last: dict[str, int] = {}
    for line in lines:
        if (m := METRIC.search(line)) is not None:
            assert int(m.group(2)) > last.get(m.group(1), 0), line
            last[m.group(1)] = int(m.group(2))
    final = next(i for i, line in enumerate(lines) if line.endswith("status=succeeded"))
    assert not [line for line in lines[final:] if METRIC.search(line)]


def test_a_metric_line_shows_a_hostile_name_escaped() -> None:
    out = io.StringIO()
    LinePrinter(_sft_job(), [], out=out)(_metric(3, "gepa.best_score\x1b]0;pwned\x07"))
    assert "[metric] gepa.best_score\\x1b]0;pwned\\x07=" in out.getvalue() and "\x1b" not in out.getvalue()


def test_all_events_prints_each_chunk_as_event_by_event_noise_hidden_and_control_escaped() -> None:
    """``--all-events`` prints a chunk of plain events from one noise check and one escape check; a chunk holding a
    noise word, an escape or a control character gets the lines each event would get on its own."""
    from synth_nb.cli.printer import format_event
    from synth_nb.untrusted import inert

    job = Job("job_all", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("rl").endpoints)
    odd = {300: ("rl.job.created", "modal container ready"), 301: ("rl.status", "queued on HATCHET"),
           302: ("rl.train.step", "step\x1b]0;pwned\x07"), 303: ("rl.train.step", "line\nbreak"),
           304: ("rl.train.failed", "boom"), 305: ("rl.worker.alive", "")}
    events = [Event(seq=seq, type=odd.get(seq, ("rl.train.step",))[0], message=odd.get(seq, ("", f"step {seq}"))[1],
                    level="error" if seq == 304 else "info", data={"step": seq}) for seq in range(1, 700)]
    job.ingest_events([*map(EventRecord.of, events)])
    out = io.StringIO()
    LinePrinter(job, [], out=out).history(all_events=True)
    printed = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()[1:]]
    shows = LinePrinter(job, [], out=io.StringIO()).shows
    assert printed == [inert(line) for event in events if shows(event) for line in format_event(event)]
    assert len(printed) == len(events) - 3 and "\x1b" not in out.getvalue()  # 300, 301 and 305 are noise
