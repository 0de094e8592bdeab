"""Which metric names and events feed which series, per flow, and how ``ChartData`` collects them."""

from __future__ import annotations

from synth_nb.flows import all_flows, get_flow
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
    assert spec.baseline_from_event("mipro.baseline.test", {"test_score": 0.33}) == 0.33
    assert spec.baseline_from_event("prompt.learning.validation.summary", {"baseline": 0.2}) == 0.2
    assert spec.baseline_from_event("prompt.learning.validation.scored", {"accuracy": 0.9}) is None
    assert spec.baseline_from_event("prompt.learning.candidate.evaluated", {"score": 0.6, "is_baseline": True}) == 0.6


def test_chart_data_reads_records_and_their_dicts_alike() -> None:
    from_records, from_dicts = ChartData(get_flow("sft").chart), ChartData(get_flow("sft").chart)
    points = [MetricPoint(name="train.loss", step=s, value=1.0 / s) for s in (1, 2, 3)]
    assert from_records.extend(points)
    assert from_dicts.extend([p.model_dump() for p in points])
    for data in (from_records, from_dicts):
        x, y = data.series["train"].xy()
        assert list(x) == [1, 2, 3] and y[-1] == 1.0 / 3
    assert not from_records.add_metric(MetricPoint(name="unrelated", step=1, value=0.0))


def test_best_so_far_follows_the_trials_and_a_late_baseline_does_not_replace_the_first() -> None:
    data = ChartData(get_flow("prompt_learning").chart)
    for seq, score in enumerate((0.4, 0.7, 0.5), start=1):
        data.add_event(Event(seq=seq, type="prompt.learning.trial.results", data={"mean": score}))
    data.add_event(Event(seq=4, type="prompt.learning.validation.scored", data={"accuracy": 0.3, "is_baseline": True}))
    data.add_event(Event(seq=5, type="prompt.learning.validation.summary", data={"baseline": {"accuracy": 0.9}}))
    assert list(data.series["best"].xy()[1]) == [0.4, 0.7, 0.7]
    assert data.baseline == 0.3
    rows = {r["series"]: r for r in data.latest_values()}
    assert rows["best so far"]["best"] == 0.7 and rows["baseline"]["latest"] == 0.3


def test_chart_png_draws_data_and_nothing_without_it() -> None:
    data = ChartData(get_flow("rl").chart)
    assert chart_png(data, "empty") is None
    data.add_metric(MetricPoint(name="train.reward_mean", step=1, value=0.2))
    png = chart_png(data, "RL")
    assert png is not None and png.startswith(b"\x89PNG")
