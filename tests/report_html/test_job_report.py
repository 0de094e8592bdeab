"""A job's HTML report (``job.to_html``, ``synth-nb report``): what it says for each flow, checked against the job's
own ending, gains and metrics; that it asks for nothing over the network; that it still reads through the
sanitizer GitHub's renderer is built on (Ammonia, ``nh3``) with scripts and styles stripped; and that a hostile
backend's text stays text in it.

The jobs are the shared real runs on the embedded backend (``real_runs``: GEPA, MIPRO, SFT and RL), the hostile
ones a real server whose every string is markup (``hostile_text_backend``).
"""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nh3
import pytest
from hostile_text_backend import FENCE_BREAKER, KEY, PAYLOADS, PL_JOB, RL_JOB, SFT_JOB, hostile, made
from hostile_text_backend import serve_hostile_jobs as serve
from real_runs import real_runs

from synth_nb.cli.main import main
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.job import attach
from synth_nb.job.describe import latest_metrics
from synth_nb.job.report_html import REPORT_FILE, chart_alt, job_page
from synth_nb.job.report_html.charts import job_chart


class Page(HTMLParser):
    """What a page asks of the network (every ``src``/``href``), its headings, and its text by section."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.headings: list[str] = []
        self.alts: list[str] = []
        self.tags: set[str] = set()
        self._heading: list[str] | None = None
        self._skip = False
        self.text = ""
        self.feed(markup)
        self.close()
        self.text = " ".join(self.text.split())

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._skip = tag in ("script", "style")
        values = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "action", "srcset", "poster")]
        if tag == "img":
            self.alts.append(values.get("alt") or "")
        if tag in ("h1", "h2"):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        self._skip = False
        if tag in ("h1", "h2") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text += " " + data
        if self._heading is not None:
            self._heading.append(data)


def _local_only(urls: list[str]) -> list[str]:
    """The URLs that would leave the page: anything but an inline ``data:`` file or a link inside the page."""
    return [u for u in urls if not u.startswith(("data:", "#"))]


@pytest.mark.parametrize("name", ["gepa_a", "sft", "rl"])
def test_the_report_says_how_the_job_ended_and_what_each_figure_was_measured_on(name: str) -> None:
    job = real_runs().jobs[name]
    html = job_page(job)
    page = Page(html)
    ending = job.ending()
    assert html.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in html and "default-src 'none'" in html
    assert _local_only(page.urls) == []  # nothing to fetch: the chart is inline, no stylesheet, no font
    assert page.headings[:5] == [f"Report of job {job.id}", "How it ended", "Headline figures",
                                 "Estimate beside the actual", get_flow(job.flow).chart.title]
    assert {"Final block", "Summary", "Config and plan (masked)"} <= set(page.headings)
    assert ending.headline(job.id) in page.text and f"Why it stopped {ending.stop.text}" in page.text
    assert ending.gains, "every flow of the real runs reports its gain"
    for gain in ending.gains:  # each figure beside the data it was measured on, held out or the run's own
        which = "held out (data the run did not learn from)" if gain.held_out else "the run's own data"
        assert (f"{gain.measure} {gain.baseline:.4f} {gain.result:.4f} {gain.result - gain.baseline:+.4f} "
                f"{gain.measured_on} {which}") in page.text
    for figure in ending.figures:
        if figure.actual is not None:
            assert f"{figure.name} {figure.actual_text} none kept" in page.text  # sent without an estimate
    assert "Estimate: none kept (the job was not sent from here)." in page.text
    assert page.alts == [chart_alt(get_flow(job.flow).chart.title, job_chart(job))]
    for point in latest_metrics(job.metrics):  # the final block: each metric's last value
        assert f"{point.name} {point.step} {point.value:.4f}" in page.text
    assert f"Events {len(job.events):,} Metric points {len(job.metrics):,}" in page.text
    assert "No bundle of this job" in page.text  # sent by the test itself, not through a door that keeps one
    assert ("Explorer" in page.headings) == (job.flow == "prompt_learning")
    if job.flow == "prompt_learning":
        assert job.explorer().summary_line() in page.text
        assert f"Prompt-learning summary: {job.id}" in page.text


def test_job_to_html_writes_the_page_and_the_command_writes_it_and_a_comparison(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    runs = real_runs()
    gepa, sft = runs.jobs["gepa_b"], runs.jobs["sft"]
    written = gepa.to_html(tmp_path / "gepa.html")
    assert written == tmp_path / "gepa.html" and f"Report of job {gepa.id}" in Page(written.read_text()).text

    monkeypatch.chdir(runs.folder)  # its registry knows where each job went
    monkeypatch.setenv("SYNTH_API_KEY", runs.api_key)
    assert main(["report", sft.id]) == 0
    default = runs.registry().folder_of(sft.id) / sft.id / REPORT_FILE  # its own folder, beside its other files
    assert capsys.readouterr().out.strip() == f"Wrote {default}"
    assert sft.ending().headline(sft.id) in Page(default.read_text(encoding="utf-8")).text

    out = tmp_path / "compare.html"
    assert main(["report", "--compare", gepa.id, sft.id, "--html", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    page = Page(html)
    assert "default-src 'none'" in html and _local_only(page.urls) == []
    assert "Comparison of 2 runs" in page.text and "Final metrics" in page.text
    assert f"gepa_b.toml · {gepa.id}" in page.text and sft.id in page.text
    assert page.alts and all(a for a in page.alts)  # each progress axis's curves, said in words

    assert main(["report"]) == 2
    assert "name one job (synth-nb report JOB) or the jobs to compare" in capsys.readouterr().err
    assert main(["report", "pl_not_a_job_here"]) == 2


def test_the_report_still_reads_through_a_sanitizer_with_scripts_and_styles_stripped() -> None:
    """GitHub's and nbviewer's sanitizers keep text, headings, tables and images and drop script, style and
    event attributes: Ammonia's own allow-list, as is, and with ``data:`` images allowed (as JupyterLab's does)."""
    job = real_runs().jobs["mipro"]
    before = Page(job_page(job))
    for schemes in (nh3.ALLOWED_URL_SCHEMES, {*nh3.ALLOWED_URL_SCHEMES, "data"}):
        cleaned = nh3.clean(job_page(job), url_schemes=set(schemes))
        after = Page(cleaned)
        assert "<script" not in cleaned and "<style" not in cleaned and " on" not in re.sub(r">[^<]*<", "><", cleaned)
        assert after.headings == before.headings  # every section still there, in order
        assert {"table", "th", "td", "img", "figcaption", "details", "pre"} <= after.tags
        assert after.alts == before.alts  # the chart is said in words even where its data: image is dropped
        for words in (job.ending().headline(job.id), "Each metric's last value", "Why it stopped",
                      f"Prompt-learning summary: {job.id}", job.explorer().summary_line()):
            assert words in after.text
    kept = nh3.clean(job_page(job), url_schemes={*nh3.ALLOWED_URL_SCHEMES, "data"})
    assert "src=\"data:image/png;base64," in kept


def test_a_hostile_backends_text_is_shown_as_text_in_every_report() -> None:
    async def reports(url: str) -> dict[str, str]:
        pages = {}
        async with AsyncSynthClient(url, KEY) as client:
            for job_id in (PL_JOB, SFT_JOB, RL_JOB):
                flows = {name: get_flow(name).endpoints for name in guess_flow(job_id)}
                job: Any = await attach(job_id, client, flows, kind_of=flow_named_in)
                pages[job_id] = await asyncio.to_thread(job_page, job)
        return pages

    with serve() as backend:
        pages = asyncio.run(reports(backend.url))
    for job_id, html in pages.items():
        shown = made({"text/html": html})
        assert shown.found == [], (job_id, shown.found)
        assert KEY not in html
        text = " ".join(shown.text.split())
        assert " ".join(hostile().split()) in text, job_id  # the backend's error, as sent
    pl = " ".join(made({"text/html": pages[PL_JOB]}).text.split())
    for name in ("img", "link", "script", "image", "autolink", "svg", "details", "tick", "math"):
        assert PAYLOADS[name] in pl, name
    assert " ".join(FENCE_BREAKER.split()) in pl


class _Finished:
    """A finished job's history under a results folder of the test's own (``write_results`` writes once per job)."""

    def __init__(self, job: Any, folder: Path) -> None:
        self.id, self.flow, self.algorithm, self.status = job.id, job.flow, job.algorithm, job.status
        self.status_doc, self.events, self.metrics = job.status_doc, job.events, job.metrics
        self.results_folder, self.hidden = folder, ()


def test_the_report_is_written_beside_the_result_files_and_a_failing_one_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synth_nb.job import results

    job = real_runs().jobs["gepa_b"]
    written = results.write_results(_Finished(job, tmp_path / "ok"))
    assert written.report == tmp_path / "ok" / job.id / REPORT_FILE and written.report_problem is None
    assert [p.name for p in written.files][0] == "summary.md"
    assert f"Report of job {job.id}" in Page(written.report.read_text(encoding="utf-8")).text

    def broken(*args: Any, **kwargs: Any) -> Path:
        raise RuntimeError("no chart today")

    monkeypatch.setattr(results, "write_job_report", broken)
    failed = results.write_results(_Finished(job, tmp_path / "broken"))
    assert failed.files and failed.problem is None and failed.report is None  # the result files are whole
    assert failed.report_problem == (f"could not write {REPORT_FILE} to {tmp_path / 'broken' / job.id}/: "
                                     "RuntimeError: no chart today")
