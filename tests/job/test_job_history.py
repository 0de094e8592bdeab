"""A job's compact history: exact dedupe and order whatever the arrival order, models rebuilt unchanged,
history replays fixed when asked for, DataFrames from the columns, and memory per record bounded."""

from __future__ import annotations

import gc
import math
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth_nb.client import EventRecord, MetricRecord
from synth_nb.errors import JobFailedError
from synth_nb.job import JobHistory
from synth_nb.job.columns import CHUNK_ROWS, DocumentColumn
from synth_nb.records import Event, MetricPoint


def _event(seq: int, **fields: object) -> Event:
    return Event(seq=seq, type=f"t{seq % 3}", message=f"step {seq}", data={"step": seq}, **fields)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=600), max_size=900))
def test_events_keep_each_seq_once_in_seq_order(seqs: list[int]) -> None:
    history = JobHistory("job_1", "rl")
    fresh = [history.ingest_event(_event(seq)) for seq in seqs]
    expected = sorted(set(seqs))
    assert sum(fresh) == len(expected)
    assert [e.seq for e in history.events] == expected
    assert [e.seq for e in reversed(history.events)] == expected[::-1]
    assert history.last_seq == (expected[-1] if expected else 0)
    if expected:
        assert history.events[-1].seq == expected[-1] and history.events[0].seq == expected[0]
        assert [e.seq for e in history.events[1:4]] == expected[1:4]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["loss", "val.loss", "lr"]), st.integers(min_value=0, max_value=200)),
                max_size=700))
def test_metrics_keep_each_name_and_step_once_in_step_then_name_order(keys: list[tuple[str, int]]) -> None:
    history = JobHistory("job_1", "sft")
    for name, step in keys:
        history.ingest_metric(MetricPoint(name=name, step=step, value=step / 10))
    expected = sorted({(step, name) for name, step in keys})
    assert [(m.step, m.name) for m in history.metrics] == expected
    for name in ("loss", "val.loss", "lr"):
        steps = [s for s, n in expected if n == name]
        assert history.metric_series(name) == [(s, s / 10) for s in steps]
        assert history.last_steps.get(name) == (steps[-1] if steps else None)
        latest = history.metrics.latest().get(name)
        assert (latest.step if latest else None) == (steps[-1] if steps else None)


def _pages(items: list[object], cuts: list[int]) -> list[list[object]]:
    bounds = sorted({0, len(items), *(c % (len(items) + 1) for c in cuts)})
    return [items[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=2 * CHUNK_ROWS), max_size=3 * CHUNK_ROWS),
       st.lists(st.integers(min_value=0), max_size=8), st.booleans())
def test_event_pages_make_the_same_history_as_events_one_by_one(seqs: list[int], cuts: list[int],
                                                                 ascending: bool) -> None:
    """Pages in order past the newest seq (the column-wise path), overlapping pages, pages with repeats
    and pages behind the newest seq all keep exactly what one-by-one ingestion keeps, in the same order."""
    if ascending:
        seqs = sorted(seqs)
    # a long message now and then, so that the byte limit of a chunk falls inside a page
    records = [EventRecord.of(_event(seq, note="x" * (70_000 if seq % 97 == 0 else 3))) for seq in seqs]
    one, paged = JobHistory("job_1", "rl"), JobHistory("job_1", "rl")
    kept_one = [r.seq for r in records if one.ingest_event(r)]
    kept_paged = sum(paged.ingest_events(page) for page in _pages(records, cuts))  # type: ignore[arg-type]
    assert kept_paged == len(kept_one) == len(set(seqs))
    assert [e.seq for e in paged.events] == [e.seq for e in one.events] == sorted(set(seqs))
    assert [e.model_dump() for e in paged.events] == [e.model_dump() for e in one.events]
    assert paged.events.of_types(["t1"]) is not None
    assert [e.seq for e in paged.events.of_types(["t1"])] == [e.seq for e in one.events.of_types(["t1"])]
    assert paged.last_seq == one.last_seq
    # later single events still land in order after pages
    for history in (one, paged):
        history.ingest_event(_event(1))
        history.ingest_event(_event(10 * CHUNK_ROWS))
    assert [e.seq for e in paged.events] == [e.seq for e in one.events]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["train.reward_mean", "train.loss", "lr"]),
                          st.integers(min_value=0, max_value=CHUNK_ROWS)), max_size=3 * CHUNK_ROWS),
       st.lists(st.integers(min_value=0), max_size=8), st.booleans())
def test_metric_pages_make_the_same_history_as_points_one_by_one(keys: list[tuple[str, int]], cuts: list[int],
                                                                 by_step: bool) -> None:
    """Metric pages come ordered by step with names in storage order, and a backfill re-reads its boundary
    step: whatever the page, the paged history equals the one-by-one history."""
    if by_step:
        keys = sorted(keys, key=lambda k: k[1])
    records = [MetricRecord.of(MetricPoint(name=n, step=s, value=s / 7)) for n, s in keys]
    one, paged = JobHistory("job_1", "sft"), JobHistory("job_1", "sft")
    kept_one = sum(one.ingest_metric(r) for r in records)
    pages = _pages(records, cuts)
    overlapping = [page + pages[i + 1][:2] for i, page in enumerate(pages[:-1])] + pages[-1:]
    kept_paged = sum(paged.ingest_metrics(page) for page in overlapping)  # type: ignore[arg-type]
    assert kept_paged == kept_one == len(set(keys))
    assert [(m.step, m.name, m.value) for m in paged.metrics] == [(m.step, m.name, m.value) for m in one.metrics]
    assert paged.last_steps == one.last_steps
    assert {n: p.step for n, p in paged.metrics.latest().items()} == {n: p.step for n, p in one.metrics.latest().items()}
    for name in ("train.reward_mean", "train.loss", "lr"):
        assert paged.metric_series(name) == one.metric_series(name)


def test_a_page_in_order_is_stored_without_a_permutation() -> None:
    """A metric page ordered by step with two names per step is the usual case: the paged path sorts it,
    so no row-order permutation (8 bytes a row) is kept."""
    records = [MetricRecord.of(MetricPoint(name=name, step=step, value=1.0))
               for step in range(500) for name in ("train.reward_mean", "train.loss")]
    one, paged = JobHistory("job_1", "rl"), JobHistory("job_1", "rl")
    for r in records:
        one.ingest_metric(r)
    paged.ingest_metrics(records)
    assert [(m.step, m.name) for m in paged.metrics] == [(m.step, m.name) for m in one.metrics]
    assert one.metrics.nbytes - paged.metrics.nbytes >= 8 * len(records) - 512  # documents: same bytes, reordered


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40_000), max_size=3 * CHUNK_ROWS),
       st.lists(st.integers(min_value=0), max_size=6))
def test_documents_added_a_page_at_a_time_make_the_same_chunks(sizes: list[int], cuts: list[int]) -> None:
    one, paged = DocumentColumn(), DocumentColumn()
    documents = [b'{"n":"' + str(i).encode() * max(1, size // 6) + b'"}' for i, size in enumerate(sizes)]
    for document in documents:
        one.append(document)
    for page in _pages(documents, cuts):  # type: ignore[arg-type]
        paged.extend(page)  # type: ignore[arg-type]
    assert len(paged) == len(documents) and paged.nbytes == one.nbytes
    assert [paged[row] for row in range(len(documents))] == documents


def test_models_come_back_unchanged_across_compressed_chunks() -> None:
    history = JobHistory("job_1", "rl")
    originals = [_event(seq, job_id="job_1", note="é ✓ \u2028") for seq in range(1, 3 * CHUNK_ROWS + 7)]
    for event in reversed(originals):  # every one arrives out of order
        history.ingest_event(event)
    assert list(history.events) == originals
    assert history.events[CHUNK_ROWS + 3] == originals[CHUNK_ROWS + 3]
    assert history.events[5].model_extra == {"job_id": "job_1", "note": "é ✓ \u2028"}
    point = MetricPoint(name="loss", step=1, value=math.nan, epoch=2, data={"n": 3}, created_at="x")
    history.ingest_metric(point)
    again = history.metrics[0]
    assert math.isnan(again.value) and (again.epoch, again.data, again.created_at) == (2, {"n": 3}, "x")


def test_records_and_models_share_one_history() -> None:
    history = JobHistory("job_1", "rl")
    assert history.ingest_event(EventRecord.of(_event(2)))
    assert not history.ingest_event(_event(2))
    assert history.ingest_metric(MetricRecord.of(MetricPoint(name="loss", step=1, value=0.5)))
    assert not history.ingest_metric(MetricPoint(name="loss", step=1, value=0.7))
    assert history.metrics[0].value == 0.5 and history.events[0] == _event(2)


def test_listeners_get_models_for_records() -> None:
    history = JobHistory("job_1", "rl")
    seen: list[object] = []
    history.add_listener(lambda update: seen.append(update.event or update.metric))
    history.ingest_event(EventRecord.of(_event(1)))
    history.ingest_metric(MetricRecord.of(MetricPoint(name="loss", step=1, value=0.5)))
    assert seen == [_event(1), MetricPoint(name="loss", step=1, value=0.5)]


def test_history_replay_is_fixed_when_asked_for() -> None:
    history = JobHistory("job_1", "rl")
    for seq in (1, 3, 5):
        history.ingest_event(_event(seq))
    history.ingest_metric(MetricPoint(name="loss", step=2, value=1.0))
    replay = history.history_updates()
    history.ingest_event(_event(2))  # arrives out of order after the replay was asked for
    history.ingest_event(_event(6))
    history.ingest_metric(MetricPoint(name="loss", step=1, value=1.0))
    updates = list(replay)
    assert [u.kind for u in updates] == ["status", "event", "event", "event", "metric"]
    assert [u.event.seq for u in updates if u.event is not None] == [1, 3, 5]
    assert [u.metric.step for u in updates if u.metric is not None] == [2]
    assert [e.seq for e in history.events] == [1, 2, 3, 5, 6]


def test_dataframes_come_from_the_columns_in_order() -> None:
    history = JobHistory("job_1", "rl")
    assert list(history.events_df().columns) == ["seq", "type", "level", "message", "data", "created_at"]
    assert history.metrics_df().empty
    seqs = list(range(1, 2 * CHUNK_ROWS))
    random.Random(3).shuffle(seqs)
    for seq in seqs:
        history.ingest_event(_event(seq, level="warning" if seq % 5 == 0 else "info", created_at=f"t{seq}"))
    for step in (3, 1, 2):
        for name in ("val", "loss"):
            history.ingest_metric(MetricPoint(name=name, step=step, value=step * 0.5, epoch=step, data={"s": step}))
    events = history.events_df()
    assert events["seq"].tolist() == sorted(seqs)
    assert events["type"].tolist() == [f"t{s % 3}" for s in sorted(seqs)]
    assert events["level"].tolist() == ["warning" if s % 5 == 0 else "info" for s in sorted(seqs)]
    assert events["message"].tolist() == [f"step {s}" for s in sorted(seqs)]
    assert events["data"].tolist() == [{"step": s} for s in sorted(seqs)]
    assert events["created_at"].tolist() == [f"t{s}" for s in sorted(seqs)]
    metrics = history.metrics_df()
    assert list(zip(metrics["step"], metrics["name"], strict=True)) == [
        (1, "loss"), (1, "val"), (2, "loss"), (2, "val"), (3, "loss"), (3, "val")]
    assert metrics["value"].tolist() == [0.5, 0.5, 1.0, 1.0, 1.5, 1.5]
    assert metrics["epoch"].tolist() == [1, 1, 2, 2, 3, 3] and metrics["data"].tolist()[0] == {"s": 1}


def test_non_finite_values_reach_the_dataframe() -> None:
    history = JobHistory("job_1", "sft")
    history.ingest_metric(MetricPoint(name="loss", step=1, value=math.inf))
    history.ingest_metric(MetricPoint(name="loss", step=2, value=0.25))
    assert history.metrics_df()["value"].tolist() == [math.inf, 0.25]


def test_the_failure_reason_is_the_newest_error_event() -> None:
    history = JobHistory("job_1", "sft")
    history.ingest_event(Event(seq=1, type="sft.job.failed", data={"detail": "old"}))
    for seq in range(2, 2 * CHUNK_ROWS):
        history.ingest_event(_event(seq))
    history.ingest_event(Event(seq=2 * CHUNK_ROWS, type="x", level="ERROR", message="OOM"))
    history.ingest_event(_event(2 * CHUNK_ROWS + 1))
    history.ingest_status({"status": "failed"})
    with pytest.raises(JobFailedError, match="failed: OOM$"):
        history.raise_for_status()
    assert history.events.last_error() == Event(seq=2 * CHUNK_ROWS, type="x", level="ERROR", message="OOM")
    assert [e.seq for e in history.events.of_types(["sft.job.failed", "absent"])] == [1]


def test_fifty_thousand_events_and_points_hold_a_few_hundred_bytes_each() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        history = JobHistory("job_1", "rl")
        for seq in range(1, 50_001):
            history.ingest_event(EventRecord(seq, "rl.train.step", "info", (
                f'{{"seq":{seq},"type":"rl.train.step","level":"info","message":"step {seq}/50000 '
                f'reward_mean=0.41","data":{{"step":{seq},"reward_mean":0.41}},'
                f'"created_at":"2026-01-01T00:00:{seq % 60:02d}.{seq:06d}Z","job_id":"job_1"}}').encode()))
            history.ingest_metric(MetricRecord("train.loss", seq, 1 / seq, (
                f'{{"name":"train.loss","step":{seq},"value":{1 / seq},"data":{{}},'
                f'"created_at":"2026-01-01T00:00:00Z","job_id":"job_1"}}').encode()))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(history.events) == len(history.metrics) == 50_000
    assert held / 100_000 < 400  # a pydantic model per record held about 1,800


@pytest.mark.parametrize("shuffled", [False, True])
def test_an_event_log_s_fields_are_its_events_fields_in_seq_order(shuffled: bool) -> None:
    """``EventLog.fields`` (a chunk of documents decoded at once) gives each event's seq, type, level, message
    and data as the event has them, in seq order: across chunks, with a NaN in one chunk (read one event at a
    time), and with events that came out of order."""
    from synth_nb.job.logs import EventLog

    events = [Event(seq=i, type=f"t{i % 3}", level="error" if i % 7 == 0 else "info", message=f"m{i}",
                    data={"i": i, "x": math.nan if i == 5 else i / 2, "s": "é"})
              for i in range(1, 2 * CHUNK_ROWS + 40)]
    if shuffled:
        random.Random(3).shuffle(events)
    log = EventLog()
    for start in range(0, len(events), 100):
        log.extend([EventRecord.of(e) for e in events[start:start + 100]])
    got = [(f.seq, f.type, f.level, f.message, f.data()) for f in log.fields()]
    want = [(e.seq, e.type, e.level, e.message, e.data) for e in log]
    assert [g[:4] for g in got] == [w[:4] for w in want] and len(got) == len(events)
    for (*_, data), (*_, expected) in zip(got, want, strict=True):
        assert data.keys() == expected.keys() and data["i"] == expected["i"]
        assert data["x"] == expected["x"] or (math.isnan(data["x"]) and math.isnan(expected["x"]))
