"""LiveChart: routing points to series, min/max downsampling, rate-limited in-place redraws, text table."""

from __future__ import annotations

import base64
from types import SimpleNamespace as NS

import numpy as np
import pytest
from _display_capture import capture_display

from synth_nb.flows.chart_png import minmax_downsample
from synth_nb.notebook.chart import MAX_INTERVAL, LiveChart

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture()
def outputs(monkeypatch):
    return capture_display(monkeypatch)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


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


def test_prompt_learning_events_give_trials_best_so_far_and_the_held_out_scores() -> None:
    chart = LiveChart("prompt_learning")
    for score in (0.5, 0.3, 0.7, 0.6):
        chart.add_event(NS(type="prompt.learning.trial.results", data={"mean": score}))
    chart.add_event(NS(type="prompt.learning.validation.summary",
                       data={"baseline": {"accuracy": 0.4}, "results": [{"accuracy": 0.65}]}))
    assert chart.references == {"heldout_baseline": 0.4, "heldout_best": 0.65}
    assert list(chart.series["trial"].xy()[1]) == [0.5, 0.3, 0.7, 0.6]
    assert list(chart.series["best"].xy()[1]) == [0.5, 0.5, 0.7, 0.7]
    table = chart.text_table()
    assert "baseline (held-out)" in table and "best prompt (held-out)" in table
    assert chart.data.xlabel() == "trial"  # every point came from an event: x counts trials


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


def test_the_search_baseline_stays_and_the_held_out_baseline_is_shown_beside_it() -> None:
    chart = LiveChart("prompt_learning")
    chart.add_metric(NS(name="gepa.best_score", step=40, value=0.7))
    chart.add_event(NS(type="prompt.learning.candidate.evaluated", data={"is_baseline": True, "score": 0.646}))
    chart.add_event(NS(type="prompt.learning.validation.scored", data={"is_baseline": True, "accuracy": 0.75}))
    chart.add_event(NS(type="prompt.learning.validation.summary", data={"baseline": {"accuracy": 0.75},
                                                                        "results": [{"accuracy": 0.8}]}))
    chart.add_event(NS(type="prompt.learning.candidate.evaluated", data={"is_baseline": True, "score": 0.5}))
    assert chart.references == {"baseline": 0.646, "heldout_baseline": 0.75, "heldout_best": 0.8}
    alt = chart.alt_text()
    assert "best so far 0.7 at rollouts used 40" in alt
    assert alt.endswith("baseline (search) 0.646; baseline (held-out) 0.75; best prompt (held-out) 0.8.")
    assert chart.render_png().startswith(PNG_MAGIC)


def test_mipro_search_baseline_is_its_first_full_evaluation_and_test_scores_are_held_out() -> None:
    chart = LiveChart("prompt_learning")
    chart.add_event(NS(type="mipro.fulleval.complete", data={"score": 0.55, "candidate_index": 0}))
    chart.add_event(NS(type="mipro.fulleval.complete", data={"score": 0.7, "candidate_index": 3}))
    chart.add_event(NS(type="mipro.baseline.test", data={"test_score": 0.5}))
    chart.add_event(NS(type="mipro.topk.evaluated", data={"rank": 1, "test_score": 0.62}))
    chart.add_event(NS(type="mipro.topk.evaluated", data={"rank": 2, "test_score": 0.6}))
    assert chart.references == {"baseline": 0.55, "heldout_baseline": 0.5, "heldout_best": 0.62}


def test_redraw_is_rate_limited_to_the_interval_and_updates_one_output(outputs) -> None:
    clock = FakeClock()
    chart = LiveChart("sft", clock=clock, min_interval=0.5, cost_factor=0)  # the fixed interval alone
    chart.display()
    (output,) = outputs
    assert output.display_id == chart.display_id
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    clock.now += 1
    assert chart.redraw()
    chart.add_metric(NS(name="train.loss", step=2, value=0.9))
    clock.now += 0.2
    assert not chart.redraw()  # too soon
    clock.now += 0.31
    assert chart.redraw()
    assert not chart.redraw()  # nothing new
    assert chart.redraw(force=True)
    assert len(output.shown) == 4  # the waiting sentence, then three frames, all in the one output
    png = base64.b64decode(output.last["image/png"])
    assert png.startswith(PNG_MAGIC)
    assert "train loss" in output.last["text/plain"]


def test_a_costly_draw_delays_the_next_one_in_proportion(outputs) -> None:
    clock = FakeClock()
    chart = LiveChart("sft", clock=clock, min_interval=0.5)
    chart.display()
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    clock.now += 1
    assert chart.redraw()
    assert chart.last_render_cpu > 0
    chart.last_render_cpu = 0.06  # what a draw of a few thousand points costs on a slow machine
    assert chart.interval() == pytest.approx(40 * 0.06)
    chart.add_metric(NS(name="train.loss", step=2, value=0.9))
    clock.now += 1.0
    assert not chart.redraw() and chart.seconds_until_redraw() == pytest.approx(1.4)
    clock.now += 1.4
    chart.last_render_cpu = 0.06
    assert chart.redraw()


def test_a_cheap_draw_keeps_the_minimum_interval() -> None:
    chart = LiveChart("sft", min_interval=0.5)
    chart.last_render_cpu = 0.001
    assert chart.interval() == 0.5


def test_the_first_frame_s_start_up_cost_does_not_hold_back_live_frames(outputs) -> None:
    chart = LiveChart("sft", min_interval=0.5)
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    chart.display()  # the first frame: matplotlib's imports and fonts, not what a live frame costs
    assert chart.last_render_cpu == 0 and chart.interval() == 0.5
    chart.last_render_cpu = 10.0  # a live frame on a machine far too busy: the chart still shows progress
    assert chart.interval() == MAX_INTERVAL


async def test_async_redraw_renders_off_the_loop_and_publishes(outputs) -> None:
    clock = FakeClock()
    chart = LiveChart("rl", clock=clock)
    chart.display()
    chart.add_metric(NS(name="eval.reward_mean", step=3, value=0.5))
    clock.now += 1
    assert await chart.redraw_async()
    assert chart.png is not None and chart.png.startswith(PNG_MAGIC)
    assert len(outputs[0].shown) == 2


def test_large_series_renders_through_downsampling() -> None:
    chart = LiveChart("sft", buckets=300)
    for i in range(20_000):
        chart.add_metric(NS(name="train.loss", step=i, value=1.0 / (i + 1)))
    assert chart.render_png().startswith(PNG_MAGIC)
    assert chart.point_count == 20_000


def test_an_empty_chart_is_a_sentence_not_empty_axes(outputs) -> None:
    chart = LiveChart("prompt_learning")
    assert "waiting for the first trial score (small batch) point" in chart.text_table()  # what it waits for
    assert chart.html_table() == ""  # the chart output says it, the status output does not repeat it
    chart.display()
    (output,) = outputs
    assert "image/png" not in output.last
    assert output.last["text/plain"] == "Prompt learning score: waiting for the first trial score (small batch) point…"
    assert "<img" not in output.last["text/html"]
    chart.ended = True
    chart.publish(None)
    assert output.last["text/plain"] == "Prompt learning score: the job reported no metrics"


def test_display_creates_one_output_with_png_html_and_text(outputs) -> None:
    chart = LiveChart("sft")
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    chart.display()
    (output,) = outputs
    assert set(output.last) == {"image/png", "text/html", "text/plain"}
    html = output.last["text/html"]
    assert "<img class='synth-chart'" in html and " alt='" in html
    # a dark theme shows the transparent, dark-ink PNG inverted instead of as a white block
    assert "body[data-jp-theme-light='false'] img.synth-chart" in html and "invert(1)" in html


def test_the_png_is_transparent() -> None:
    import io

    from matplotlib.image import imread

    chart = LiveChart("rl")
    chart.add_metric(NS(name="train.reward_mean", step=1, value=0.2))
    chart.add_metric(NS(name="train.reward_mean", step=2, value=0.4))
    pixels = imread(io.BytesIO(chart.render_png()), format="png")
    assert pixels.shape[2] == 4 and pixels[0, 0, 3] == 0.0  # the corner shows the page, not white


def _limits(chart: LiveChart) -> tuple[tuple[float, float], tuple[float, float]]:
    assert chart._canvas is not None
    return tuple(chart._canvas.ax.get_xlim()), tuple(chart._canvas.ax.get_ylim())


def test_live_frames_keep_their_axes_until_a_point_falls_outside_and_the_final_frame_fits_exactly() -> None:
    live, fresh = LiveChart("rl"), LiveChart("rl")

    def add(step: int, value: float) -> None:
        for chart in (live, fresh):
            chart.add_metric(NS(name="train.reward_mean", step=step, value=value))

    for step in range(1, 41):
        add(step, 0.2 + step / 100)
    assert live.render_png(live=True).startswith(PNG_MAGIC)
    (x0, x1), (y0, y1) = limits = _limits(live)
    assert x0 <= 1 and x1 >= 40 and y0 <= 0.21 and y1 >= 0.6  # every point is inside
    assert x1 >= 60  # headroom: the next points fit without laying the axes out again
    add(41, 0.5)
    live.render_png(live=True)
    assert _limits(live) == limits
    add(int(x1) + 5, y1 + 1.0)  # a point past both limits grows them
    live.render_png(live=True)
    (_, nx1), (_, ny1) = _limits(live)
    assert nx1 > x1 + 5 and ny1 > y1 + 1.0
    # the final frame is the chart drawn from scratch: limits fit the data, the image is the same
    assert live.render_png() == fresh.render_png()


def test_live_frames_draw_the_reference_scores_and_the_final_frame_matches_a_fresh_chart() -> None:
    live, fresh = LiveChart("prompt_learning"), LiveChart("prompt_learning")
    for chart in (live, fresh):
        chart.add_event(NS(type="prompt.learning.candidate.evaluated", data={"is_baseline": True, "score": 0.6}))
    for step, score in ((8, 0.5), (16, 0.7), (24, 0.65)):
        for chart in (live, fresh):
            chart.add_metric(NS(name="gepa.trial.score", step=step, value=score))
        assert live.render_png(live=True).startswith(PNG_MAGIC)
    for chart in (live, fresh):
        chart.add_event(NS(type="prompt.learning.validation.summary",
                           data={"baseline": {"accuracy": 0.4}, "results": [{"accuracy": 0.9}]}))
    live.render_png(live=True)
    (_, x1), (y0, y1) = _limits(live)
    assert x1 > 24 and y0 <= 0.4 and y1 >= 0.9  # the held-out markers at the right edge are inside
    assert live.render_png() == fresh.render_png()


def test_a_live_frame_is_a_transparent_png_of_the_whole_figure() -> None:
    import io

    from matplotlib.image import imread

    chart = LiveChart("rl")
    for step in range(1, 50):
        chart.add_metric(NS(name="train.reward_mean", step=step, value=step / 50))
    exact = imread(io.BytesIO(chart.render_png()), format="png")
    live = imread(io.BytesIO(chart.render_png(live=True)), format="png")
    assert live.shape == exact.shape and live.shape[2] == 4
    assert live[0, 0, 3] == 0.0  # the corner shows the page
    assert (live[..., 3] > 0).sum() > 0.5 * (exact[..., 3] > 0).sum()  # axes, labels and the line are drawn


def test_the_prompt_learning_chart_says_which_score_is_which(outputs) -> None:
    """"trial score (small batch)" at 1.0 beside "best so far" 0.81: one sentence says what each measures."""
    chart = LiveChart("prompt_learning")
    for step, score in ((12, 1.0), (24, 0.75)):
        chart.add_metric(NS(name="gepa.trial.score", step=step, value=score, data={}))
    chart.add_metric(NS(name="gepa.best_score", step=24, value=0.81, data={}))
    bundle = chart.mimebundle()
    legend = ("Trial score (small batch): one candidate prompt scored on a small batch of training seeds, so a "
              "lucky batch reaches 1.0; best so far: the best prompt's score on the seeds the search ranks prompts "
              "by (GEPA: its validation seeds; MIPRO: its online pool), the figure the search keeps.")
    assert f"<p class='synth-chart-legend'>{legend.replace(chr(39), '&#x27;')}</p>" in bundle["text/html"]
    assert bundle["text/plain"].endswith(legend)
    assert "synth-chart-legend" not in LiveChart("sft").waiting_bundle()["text/html"]


def test_the_first_point_is_drawn_at_once_not_an_interval_after_the_waiting_sentence(outputs) -> None:
    """On a loaded machine the waiting sentence could stay until the job ended: the first frame waits for no
    interval, and later frames keep theirs."""
    clock = FakeClock()
    chart = LiveChart("sft", clock=clock, min_interval=1.0, cost_factor=0)
    chart.display()  # the waiting sentence; the figure is made in the background meanwhile
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    assert chart.seconds_until_redraw() == 0 and chart.redraw()
    chart.add_metric(NS(name="train.loss", step=2, value=0.9))
    assert not chart.redraw() and chart.seconds_until_redraw() == pytest.approx(1.0)


def test_a_live_first_frame_s_start_up_cost_does_not_hold_back_the_next() -> None:
    """The figure made by the first live frame (no background preparation): matplotlib's start-up is not
    counted as a frame's cost; a frame on a prepared figure is."""
    chart = LiveChart("sft", min_interval=0.5)
    chart.add_metric(NS(name="train.loss", step=1, value=1.0))
    chart.render_png(live=True)
    assert chart.last_render_cpu == 0 and chart.interval() == 0.5
    prepared = LiveChart("sft", min_interval=0.5)
    prepared.prepare()  # what display() starts in the background while the chart waits
    prepared.add_metric(NS(name="train.loss", step=1, value=1.0))
    prepared.render_png(live=True)
    assert prepared.last_render_cpu > 0
