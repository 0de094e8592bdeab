"""LiveChart: routing points to series, min/max downsampling, rate-limited in-place redraws, text table."""

from __future__ import annotations

import base64
from types import SimpleNamespace as NS

import numpy as np

from synth_nb.flows.chart_png import minmax_downsample
from synth_nb.notebook.chart import LiveChart

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeHandle:
    def __init__(self) -> None:
        self.updates: list[dict] = []

    def update(self, bundle: dict, raw: bool = False) -> None:
        assert raw
        self.updates.append(bundle)


def test_downsample_keeps_spikes_first_last_and_bounds_size() -> None:
    x = np.arange(100_000, dtype=float)
    y = np.zeros_like(x)
    y[31_337] = 50.0
    y[77_000] = -7.0
    dx, dy = minmax_downsample(x, y, buckets=500)
    assert len(dx) <= 2 * 500 + 2
    assert dy.max() == 50.0 and dy.min() == -7.0
    assert dx[0] == 0 and dx[-1] == 99_999
    assert np.all(np.diff(dx) > 0)


def test_downsample_leaves_small_series_alone() -> None:
    x, y = np.arange(10.0), np.arange(10.0)
    dx, dy = minmax_downsample(x, y, buckets=500)
    assert dx is x and dy is y


def test_sft_metrics_feed_train_and_validation_series() -> None:
    chart = LiveChart("sft")
    assert chart.add_metric(NS(name="train.loss", step=1, value=2.0))
    assert chart.add_metric(NS(name="train.loss", step=2, value=1.5))
    assert chart.add_metric(NS(name="val.loss", step=2, value=1.7))
    assert not chart.add_metric(NS(name="lr", step=2, value=1e-4))
    rows = {r["series"]: r for r in chart.latest_values()}
    assert rows["train loss"]["latest"] == 1.5 and rows["train loss"]["best"] == 1.5
    assert rows["validation loss"]["step"] == 2


def test_repeated_step_replaces_value_and_late_steps_are_inserted_in_order() -> None:
    chart = LiveChart("rl")
    for step, value in [(1, 0.1), (4, 0.4), (4, 0.45), (1, 0.15), (2, 0.2)]:
        chart.add_metric(NS(name="train.reward_mean", step=step, value=value))
    x, y = chart.series["train"].xy()
    assert list(x) == [1, 2, 4] and list(y) == [0.15, 0.2, 0.45]


def test_prompt_learning_events_give_trials_best_so_far_and_baseline() -> None:
    chart = LiveChart("prompt_learning")
    chart.add_event(NS(type="prompt.learning.validation.summary", data={"baseline": {"accuracy": 0.4}}))
    for score in (0.5, 0.3, 0.7, 0.6):
        chart.add_event(NS(type="prompt.learning.trial.results", data={"mean": score}))
    assert chart.baseline == 0.4
    assert list(chart.series["trial"].xy()[1]) == [0.5, 0.3, 0.7, 0.6]
    assert list(chart.series["best"].xy()[1]) == [0.5, 0.5, 0.7, 0.7]
    assert "baseline" in chart.text_table()


def test_rollout_metrics_win_over_trial_events_which_are_the_fallback() -> None:
    chart = LiveChart("prompt_learning")
    chart.add_event(NS(type="mipro.trial.complete", data={"minibatch_score": 0.1, "trial": 0}))
    chart.add_event(NS(type="mipro.trial.complete", data={"minibatch_score": 0.3, "trial": 0}))
    x, y = chart.series["trial"].xy()
    assert list(x) == [1, 2] and list(y) == [0.1, 0.3]
    chart.add_metric(NS(name="gepa.trial.score", step=40, value=0.9))
    x, y = chart.series["trial"].xy()
    assert list(x) == [40] and list(y) == [0.9]


def test_best_line_follows_the_backend_best_score_not_the_best_minibatch() -> None:
    chart = LiveChart("prompt_learning")
    for step, score in ((8, 1.0), (16, 0.5)):
        chart.add_metric(NS(name="gepa.trial.score", step=step, value=score))
    assert list(chart.series["best"].xy()[1]) == [1.0, 1.0]  # running best of trials as a fallback
    chart.add_metric(NS(name="gepa.best_score", step=8, value=0.64))
    chart.add_metric(NS(name="gepa.best_score", step=16, value=0.71))
    x, y = chart.series["best"].xy()
    assert list(x) == [8, 16] and list(y) == [0.64, 0.71]


def test_search_baseline_is_not_replaced_by_the_held_out_summary() -> None:
    chart = LiveChart("prompt_learning")
    chart.add_event(NS(type="prompt.learning.candidate.evaluated", data={"is_baseline": True, "score": 0.6}))
    chart.add_event(NS(type="prompt.learning.validation.summary", data={"baseline": {"accuracy": 0.75}}))
    assert chart.baseline == 0.6


def test_redraw_is_rate_limited_to_the_interval_and_updates_one_handle() -> None:
    clock = FakeClock()
    chart = LiveChart("sft", clock=clock, min_interval=0.5)
    handle = FakeHandle()
    chart._handle = handle
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    assert chart.redraw()
    chart.add_metric(NS(name="train.loss", step=2, value=0.9))
    clock.now += 0.2
    assert not chart.redraw()  # too soon
    clock.now += 0.31
    assert chart.redraw()
    assert not chart.redraw()  # nothing new
    assert chart.redraw(force=True)
    assert len(handle.updates) == 3
    png = base64.b64decode(handle.updates[-1]["image/png"])
    assert png.startswith(PNG_MAGIC)
    assert "train loss" in handle.updates[-1]["text/plain"]


async def test_async_redraw_renders_off_the_loop_and_publishes() -> None:
    chart = LiveChart("rl", clock=FakeClock())
    handle = FakeHandle()
    chart._handle = handle
    chart.add_metric(NS(name="eval.reward_mean", step=3, value=0.5))
    assert await chart.redraw_async()
    assert chart.png is not None and chart.png.startswith(PNG_MAGIC)
    assert len(handle.updates) == 1


def test_large_series_renders_through_downsampling() -> None:
    chart = LiveChart("sft", buckets=300)
    for i in range(20_000):
        chart.add_metric(NS(name="train.loss", step=i, value=1.0 / (i + 1)))
    assert chart.render_png().startswith(PNG_MAGIC)
    assert chart.point_count == 20_000


def test_empty_chart_says_it_is_waiting() -> None:
    chart = LiveChart("prompt_learning")
    assert "waiting for metrics" in chart.text_table()
    assert "Waiting for metrics" in chart.html_table()
    assert chart.render_png().startswith(PNG_MAGIC)


def test_display_creates_one_output_with_png_and_text(monkeypatch) -> None:
    import IPython.display

    shown: list[tuple[dict, dict]] = []

    def fake_display(obj, **kwargs):
        shown.append((obj, kwargs))
        return FakeHandle()

    monkeypatch.setattr(IPython.display, "display", fake_display)
    chart = LiveChart("sft")
    handle = chart.display()
    assert isinstance(handle, FakeHandle)
    (bundle, kwargs), = shown
    assert kwargs == {"raw": True, "display_id": True}
    assert set(bundle) == {"image/png", "text/html", "text/plain"}
    assert bundle["text/html"].startswith("<img class='synth-chart'") and " alt='" in bundle["text/html"]
