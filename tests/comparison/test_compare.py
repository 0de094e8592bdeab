"""``synth_nb.compare``: runs of every flow side by side, with the numbers checked against their events.

The runs are real jobs on the embedded backend (``real_runs``): two GEPA runs with different seeds and
budgets, a MIPRO run, and an SFT and an RL run replayed from the bundled recordings.
"""

from __future__ import annotations

from typing import Any

import pytest
from real_runs import real_runs

import synth_nb
from synth_nb.comparison import AXES, Comparison, compare
from synth_nb.comparison.plot import missing_from
from synth_nb.comparison.render import metric_cell
from synth_nb.errors import ConfigError
from synth_nb.job.progress import parse_time

ORDER = ["gepa_a", "gepa_b", "mipro", "sft", "rl"]


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    runs = real_runs()
    return compare([runs.jobs[name] for name in ORDER], folder=runs.folder)


def _last(job: Any, name: str) -> tuple[float, list[float]]:
    series = job.metric_series(name)
    return series[-1][1], [v for _, v in series]


def _data(job: Any, etype: str) -> dict[str, Any]:
    return [e.data for e in job.events if e.type == etype][-1]


def test_synth_nb_compare_is_the_comparison_function() -> None:
    assert synth_nb.compare is compare
    with pytest.raises(AttributeError):
        _ = synth_nb.no_such_thing  # type: ignore[attr-defined]


def test_each_run_shows_its_own_flow_metric_with_the_streamed_numbers(comparison: Comparison) -> None:
    jobs = real_runs().jobs
    rows = {r["job_id"]: r for r in comparison.rows()}
    for name in ("gepa_a", "gepa_b", "mipro"):
        job, row = jobs[name], rows[jobs[name].id]
        best_metric = "gepa.best_score" if name != "mipro" else "mipro.best_score"
        final, values = _last(job, best_metric)
        done = _data(job, "prompt.learning.completed")
        assert (row["metric"], row["final"], row["best"]) == ("score: best so far", final, max(values))
        assert row["rollouts"] == done["rollouts_completed"] and row["tokens"] == done["token_count_total"]
        # one best per column, each beside what it was measured on: the search's own seeds during the run,
        # the held-out test pool after it (the status document's best_score is the held-out one)
        assert row["best_on"].endswith(("validation seeds", "online-pool seeds")), row
        assert row["held_out"] == job.status_doc["best_score"] and row["held_out"] != row["best"] or \
            row["held_out"] == row["best"] == job.status_doc["best_score"]
        assert row["held_out_on"].startswith("held-out score on ") and "held-out seeds" in row["held_out_on"]
        reason = done["finish_reason"]  # the job's own word for its end
        assert row["stopped"].startswith("succeeded: ") and f"({reason}" in row["stopped"], row["stopped"]
        assert row["run"] == f"{name}.toml · {job.id}"
    sft, rl = jobs["sft"], jobs["rl"]
    final, values = _last(sft, "train.loss")
    assert (rows[sft.id]["metric"], rows[sft.id]["final"], rows[sft.id]["best"]) == ("train loss", final, min(values))
    assert rows[sft.id]["steps"] == 120 and rows[sft.id]["rollouts"] is None
    assert rows[sft.id]["validation loss (final)"] == _last(sft, "val.loss")[0]
    final, values = _last(rl, "train.reward_mean")
    assert (rows[rl.id]["metric"], rows[rl.id]["final"], rows[rl.id]["best"]) == ("mean reward", final, max(values))
    assert rows[rl.id]["eval reward (final)"] == _last(rl, "eval.reward_mean")[0]
    for job in jobs.values():
        doc = job.status_doc
        expected = parse_time(doc["finished_at"]) - (parse_time(doc.get("started_at")) or parse_time(doc["created_at"]))
        assert rows[job.id]["duration_s"] == pytest.approx(expected)


def test_config_differences_are_the_keys_the_two_gepa_configs_change() -> None:
    runs = real_runs()
    two = compare([runs.jobs["gepa_a"], runs.jobs["gepa_b"]], folder=runs.folder)
    assert two.differences() == [("prompt_learning.gepa.rng_seed", [0, 1]),
                                 ("prompt_learning.gepa.rollout.budget", [200, 150])]
    assert two.config_df().to_dict() == {two.runs[0].label: {"prompt_learning.gepa.rng_seed": 0,
                                                             "prompt_learning.gepa.rollout.budget": 200},
                                         two.runs[1].label: {"prompt_learning.gepa.rng_seed": 1,
                                                             "prompt_learning.gepa.rollout.budget": 150}}
    assert [r.config_source for r in two.runs] == ["file", "file"]
    df = two.df
    assert df["config.prompt_learning.gepa.rollout.budget"].tolist() == [200, 150]


def test_runs_of_different_flows_are_compared_key_by_key_within_their_flow(comparison: Comparison) -> None:
    keys = dict(comparison.differences())
    assert keys["prompt_learning.gepa.rollout.budget"] == [200, 150, "—", "·", "·"]
    assert not any(k.startswith("metadata.") for k in keys)  # one SFT and one RL run: nothing to compare there


def test_runs_by_id_come_from_the_registry_and_the_backend(comparison: Comparison,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    runs = real_runs()
    monkeypatch.setenv("SYNTH_API_KEY", runs.api_key)
    by_registry = compare(folder=runs.folder)  # no ids: every job started from the folder, oldest first
    assert [r.job_id for r in by_registry.runs] == [runs.jobs[n].id for n in ORDER]
    assert by_registry.rows() == comparison.rows()
    assert [r.config_source for r in by_registry.runs] == ["file", "file", "file", "backend", "backend"]
    # an id no backend knows is a usage error naming it, never an empty table
    with pytest.raises(ConfigError, match="no such job to compare: pl_0000000000000000 "):
        compare([runs.jobs["rl"].id, "pl_0000000000000000"], folder=runs.folder)


def test_curves_sit_on_each_progress_axis_where_the_run_reports_it(comparison: Comparison) -> None:
    runs = {r.job_id: r for r in comparison.runs}
    jobs = real_runs().jobs
    assert {r.label for r in missing_from(comparison.curves, comparison.runs, "rollouts")} == {
        runs[jobs["sft"].id].label, runs[jobs["rl"].id].label}  # SFT has no rollouts; the RL recording none either
    assert missing_from(comparison.curves, comparison.runs, "seconds") == []
    frame = comparison.curves_df()
    sft = frame[(frame["job_id"] == jobs["sft"].id) & (frame["line"] == "raw") & (frame["panel"] == "SFT: train loss")]
    assert sft["value"].tolist() == [v for _, v in jobs["sft"].metric_series("train.loss")]
    assert (frame["seconds"].dropna() >= 0).all()
    gepa = frame[(frame["job_id"] == jobs["gepa_a"].id) & (frame["line"] == "raw")].sort_values("seconds")
    assert gepa["rollouts"].is_monotonic_increasing and gepa["rollouts"].max() <= 200
    for axis in AXES:
        png = comparison.png(axis)
        assert png is not None and png.startswith(b"\x89PNG")
    with pytest.raises(ConfigError, match="unknown progress axis"):
        comparison.with_axis("tokens")  # type: ignore[arg-type]


def test_the_static_output_has_every_axis_table_and_no_key(comparison: Comparison) -> None:
    shown = comparison.with_axis("rollouts")
    bundle = {**shown._repr_mimebundle_(), "text/markdown": shown.to_markdown()}
    page = bundle["text/html"]
    assert page.count("type='radio'") == 3 and "value='rollouts' checked" in page
    assert page.count("<img alt=") == 3
    for run in comparison.runs:
        assert run.label in page and run.label in bundle["text/markdown"] and run.label in bundle["text/plain"]
    assert "prompt_learning.gepa.rng_seed" in bundle["text/markdown"]
    for row in comparison.rows():  # the table shows the numbers of rows()
        assert f"<td>{metric_cell('final', row['final'])}</td>" in page
    key = real_runs().api_key
    assert all(key not in text and key[-12:] not in text for text in bundle.values())


def test_synth_nb_train_compare_prints_the_table(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.cli.main import main

    runs = real_runs()
    monkeypatch.setenv("SYNTH_API_KEY", runs.api_key)
    monkeypatch.chdir(runs.folder)
    a, b = runs.jobs["gepa_a"], runs.jobs["gepa_b"]
    assert main(["train", "--compare", a.id, b.id]) == 0
    out = capsys.readouterr().out
    assert f"gepa_a.toml · {a.id}" in out and f"gepa_b.toml · {b.id}" in out
    assert "config differences (2 keys):" in out and "prompt_learning.gepa.rollout.budget" in out


def test_nothing_to_compare_says_how_to_give_runs(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="nothing to compare"):
        compare(folder=tmp_path)


def test_the_score_columns_say_what_they_measured(comparison: Comparison) -> None:
    page, markdown = comparison._repr_mimebundle_()["text/html"], comparison.to_markdown()
    for text in (page, markdown):
        for heading in ("Best during the run", "Best measured on", "Held-out result", "Held-out measured on",
                        "Why it stopped", "Final (last value)"):
            assert heading in text
        assert "Best the job reported" not in text  # the held-out best under a search-score heading
        assert "search score on its validation seeds" in text and "held-out test pool" in text


def test_compare_without_ids_overlays_the_last_runs_of_the_newest_flow_and_says_what_it_left_out(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``%synth_train --compare`` in a folder of runs of three flows: the latest prompt-learning runs only (two,
    here), and a note naming the older one and the runs of other flows, and how to include them."""
    import importlib
    from dataclasses import replace

    from synth_nb.job import JobRegistry

    compare_module = importlib.import_module("synth_nb.comparison.compare")

    runs = real_runs()
    registry = JobRegistry(tmp_path)
    order = ["gepa_a", "sft", "gepa_b", "rl", "mipro"]  # the newest is a prompt-learning run
    for second, name in enumerate(order):
        record = runs.registry().get(runs.jobs[name].id)
        assert record is not None
        registry.record(replace(record, submitted_at=f"2030-01-01T00:00:0{second}+00:00"))
    monkeypatch.setattr(compare_module, "DEFAULT_RUNS", 2)
    monkeypatch.setenv("SYNTH_API_KEY", runs.api_key)
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")
    ip.user_ns["__session__"] = str(tmp_path / "compare.ipynb")
    try:
        shown = ip.run_line_magic("synth_train", "--compare")
    finally:
        ip.user_ns.pop("__session__", None)
    ids = {name: runs.jobs[name].id for name in order}
    assert [r.job_id for r in shown.runs] == [ids["gepa_b"], ids["mipro"]]
    note = shown.problems[0]
    assert note.startswith("Comparing the last 2 prompt_learning runs started from this folder; left out: ")
    assert f"1 older prompt_learning run ({ids['gepa_a']})" in note
    assert f"1 sft run ({ids['sft']})" in note and f"1 rl run ({ids['rl']})" in note
    assert "--compare ID ID" in note and "synth_nb.compare([...])" in note
    assert note in shown.to_text() and note in shown.to_html()
    capsys.readouterr()
