"""Which metric names and events feed which series, per flow, and how ``ChartData`` collects them."""

from __future__ import annotations

import os
import threading

from synth_nb.flows import all_flows, get_flow
from synth_nb.flows import chart_png as renderer
from synth_nb.flows.chart import ChartData
from synth_nb.flows.chart_png import chart_png
from synth_nb.records import Event, MetricPoint


def test_every_flow_has_labelled_axes_and_series() -> None:
    for flow in all_flows():
        spec = flow.chart
        assert spec.xlabel and spec.ylabel and spec.series


def test_mipro_and_gepa_event_shapes_are_understood() -> None:
    spec = get_flow("prompt_learning").chart
    trial = spec.series[0].from_event
    assert trial is not None
    assert trial("mipro.trial.complete", {"minibatch_score": 0.25}, 3) == (3, 0.25)
    assert trial("prompt.learning.trial.complete", {"trial": 7, "score": 0.5}, 1) == (7, 0.5)
    assert trial("prompt.learning.trial.complete", {"trial": 0, "score": 0.5}, 4) == (4, 0.5)
    assert trial("prompt.learning.progress", {"best_score": 0.9}, 1) is None
    search, held_base, held_best = (ref.from_event for ref in spec.references)
    assert search is not None and held_base is not None and held_best is not None
    assert search("prompt.learning.candidate.evaluated", {"score": 0.6, "is_baseline": True}) == 0.6
    assert search("mipro.fulleval.complete", {"score": 0.5, "candidate_index": 0}) == 0.5
    assert search("mipro.fulleval.complete", {"score": 0.7, "candidate_index": 2}) is None
    assert search("prompt.learning.validation.scored", {"accuracy": 0.9, "is_baseline": True}) is None
    assert held_base("mipro.baseline.test", {"test_score": 0.33}) == 0.33
    assert held_base("prompt.learning.validation.summary", {"baseline": 0.2}) == 0.2
    assert held_base("prompt.learning.validation.scored", {"accuracy": 0.9}) is None
    assert held_best("prompt.learning.validation.summary", {"baseline": 0.2, "results": [{"accuracy": 0.4}]}) == 0.4
    assert held_best("prompt.learning.validation.scored", {"accuracy": 0.9, "rank": 0}) == 0.9
    assert held_best("mipro.topk.evaluated", {"rank": 1, "test_score": 0.7}) == 0.7


def test_chart_data_reads_records_and_their_dicts_alike() -> None:
    from_records, from_dicts = ChartData(get_flow("sft").chart), ChartData(get_flow("sft").chart)
    points = [MetricPoint(name="train.loss", step=s, value=1.0 / s) for s in (1, 2, 3)]
    assert from_records.extend(points)
    assert from_dicts.extend([p.model_dump() for p in points])
    for data in (from_records, from_dicts):
        x, y = data.series["train"].xy()
        assert list(x) == [1, 2, 3] and y[-1] == 1.0 / 3
    assert not from_records.add_metric(MetricPoint(name="unrelated", step=1, value=0.0))


def test_best_so_far_follows_the_trials_and_held_out_scores_never_replace_the_search_baseline() -> None:
    data = ChartData(get_flow("prompt_learning").chart)
    data.add_event(Event(seq=1, type="prompt.learning.candidate.evaluated", data={"score": 0.3, "is_baseline": True}))
    for seq, score in enumerate((0.4, 0.7, 0.5), start=2):
        data.add_event(Event(seq=seq, type="prompt.learning.trial.results", data={"mean": score}))
    data.add_event(Event(seq=5, type="prompt.learning.validation.scored", data={"accuracy": 0.9, "is_baseline": True}))
    data.add_event(Event(seq=6, type="prompt.learning.validation.summary", data={"baseline": {"accuracy": 0.9},
                                                                              "results": [{"accuracy": 0.8}]}))
    assert list(data.series["best"].xy()[1]) == [0.4, 0.7, 0.7]
    assert data.references == {"baseline": 0.3, "heldout_baseline": 0.9, "heldout_best": 0.8}
    rows = {r["series"]: r for r in data.latest_values()}
    assert rows["best so far"]["best"] == 0.7 and rows["baseline (search)"]["latest"] == 0.3
    assert rows["baseline (held-out)"]["latest"] == 0.9 and rows["best prompt (held-out)"]["latest"] == 0.8
    # the search baseline is drawn across the curve; the held-out scores only as markers after it
    assert [(r.key, r.when) for r, _ in data.reference_values()] == [
        ("baseline", "during"), ("heldout_baseline", "after"), ("heldout_best", "after")]


def test_axis_labels_are_plain_words() -> None:
    for flow in all_flows():
        spec = flow.chart
        for label in (spec.xlabel, spec.ylabel, spec.event_xlabel or ""):
            assert "nats" not in label and ";" not in label and len(label) <= 48, label


def test_chart_png_draws_data_and_nothing_without_it() -> None:
    data = ChartData(get_flow("rl").chart)
    assert chart_png(data, "empty") is None
    data.add_metric(MetricPoint(name="train.reward_mean", step=1, value=0.2))
    png = chart_png(data, "RL")
    assert png is not None and png.startswith(b"\x89PNG")


def test_the_renderer_imported_while_a_job_runs_takes_only_a_core_nothing_else_wants() -> None:
    seen: list[int] = []

    def importing() -> None:
        renderer._import_renderer()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, 0)
    thread = threading.Thread(target=importing)
    thread.start()
    thread.join(120)
    # the import thread runs at the lowest priority (on a busy machine it would slow the job it waits for);
    # the command's own thread keeps its priority
    assert seen == [19] and os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
