"""What screen readers get from the monitor: the chart's alt text and its table, one live region, a toggle."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace as NS

from synth_nb.notebook.chart import LiveChart
from synth_nb.notebook.controls import PanelControls
from synth_nb.notebook.monitor_widgets import LiveRegion, ToggleButton


def test_alt_text_says_what_the_chart_shows_now() -> None:
    chart = LiveChart("prompt_learning")
    assert chart.alt_text() == "Prompt learning score chart: waiting for the first trial score (small batch) point."
    for step, score in ((144, 0.5), (288, 0.81), (432, 0.75)):
        chart.add_metric(NS(name="gepa.trial.score", step=step, value=score))
    chart.add_metric(NS(name="baseline.score", step=0, value=0.65))
    assert chart.alt_text() == ("Prompt learning score chart: trial score (small batch) 0.75 at rollouts used 432 "
                                "(best 0.81); best so far 0.81 at rollouts used 432; baseline (search) 0.65.")
    chart.add_metric(NS(name="gepa.trial.score", step=576, value=0.9))
    assert "best so far 0.9 at rollouts used 576" in chart.alt_text()


def test_chart_image_is_described_by_its_latest_values_table() -> None:
    chart = LiveChart("sft")
    chart.add_metric(NS(name="train.loss", step=3, value=1.25))
    img = chart.mimebundle()["text/html"]
    alt = re.search(r"alt='([^']*)'", img)
    assert alt and html.unescape(alt.group(1)) == chart.alt_text()
    described = re.search(r"aria-describedby='([^']*)'", img)
    assert described
    table_id, values_id = described.group(1).split()
    table = chart.html_table()
    assert f"id='{table_id}'" in table and f"<tbody id='{values_id}'>" in table
    assert LiveChart("sft").table_id != chart.table_id  # two charts on one page never share an id


def test_live_region_repeats_no_status_and_keeps_other_news() -> None:
    region = LiveRegion()
    region.announce_status("Job j: running.")
    assert region.value == "Job j: running."
    region.value = "Wrote summary.md"
    region.announce_status("Job j: running.")  # the same status again: the news stays
    assert region.value == "Wrote summary.md"
    region.announce_status("Job j: succeeded.")
    assert region.value == "Job j: succeeded."
    region.announce_status("")
    assert region.value == "Job j: succeeded."


def test_controls_use_the_pressed_toggle_and_the_live_region() -> None:
    shown: list[bool] = []
    controls = PanelControls(on_cancel=lambda: None, on_show_all=shown.append)
    assert isinstance(controls.show_all, ToggleButton) and isinstance(controls.message, LiveRegion)
    assert controls.cancel.icon == "" and controls.confirm.icon == ""  # icon glyphs would start the names
    controls.show_all.value = True
    assert shown == [True]
    controls.announce_status("Job j: queued.")
    assert controls.message.value == "Job j: queued."
