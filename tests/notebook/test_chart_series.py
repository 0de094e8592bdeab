"""Which metric names and events feed which series, per flow."""

from __future__ import annotations

import pytest

from synth_nb.notebook.chart_series import spec_for_flow


def test_every_flow_has_labelled_axes_and_series() -> None:
    for flow in ("sft", "rl", "prompt_learning"):
        spec = spec_for_flow(flow)
        assert spec.xlabel and spec.ylabel and spec.series


def test_unknown_flow_is_rejected_with_the_choices() -> None:
    with pytest.raises(ValueError, match="prompt_learning"):
        spec_for_flow("dpo")


def test_mipro_and_gepa_event_shapes_are_understood() -> None:
    spec = spec_for_flow("prompt_learning")
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
