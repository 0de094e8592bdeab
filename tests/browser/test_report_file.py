"""A job's report and a comparison, opened in Chromium from ``file://`` with the network off: every request the
page makes that is not the file itself (or an inline ``data:`` image) is aborted and recorded, and there must be
none; no script error; the chart drawn; and with scripts turned off the report reads the same. Screenshots in
``artifacts/screenshots/`` (``report-file-*.png``).

No JupyterLab here: the file is what a user opens from a shared folder, an e-mail or a CI artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from real_runs import real_runs

from synth_nb.comparison import compare
from synth_nb.job.report_html import comparison_page

from .conftest import SCREENSHOTS
from .page_errors import PageErrors

pytestmark = pytest.mark.browser


def _offline_context(browser: Any, *, scripts: bool) -> tuple[Any, list[str]]:
    """A browser context that lets only local files and inline data through; what else was asked, as it comes."""
    context = browser.new_context(viewport={"width": 1100, "height": 900}, java_script_enabled=scripts)
    left: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(("file:", "data:")):
            request_route.continue_()
        else:
            left.append(url)
            request_route.abort("internetdisconnected")

    context.route("**/*", route)
    return context, left


def _open(context: Any, path: Path) -> tuple[Any, PageErrors, list[str]]:
    page = context.new_page()
    errors = PageErrors(page)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(path.as_uri(), wait_until="load")
    return page, errors, asked


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Any, Path]:
    """A GEPA job's report and a comparison of three runs, written before Chromium starts (the real runs are
    made with ``asyncio.run``, which sync Playwright's own loop would refuse)."""
    folder = tmp_path_factory.mktemp("report-file")
    runs = real_runs()
    job = runs.jobs["gepa_a"]
    comparison = compare([runs.jobs["gepa_a"], runs.jobs["gepa_b"], runs.jobs["sft"]], folder=runs.folder)
    compared = folder / "comparison.html"
    compared.write_text(comparison_page(comparison.title, comparison.to_html()), encoding="utf-8")
    return job, job.to_html(folder / "report.html"), comparison, compared


def test_a_report_and_a_comparison_open_from_a_file_with_the_network_off(files: tuple[Any, Path, Any, Path],
                                                                          browser: Any) -> None:
    job, report, comparison, compared = files
    runs = real_runs()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    ending = job.ending()

    for scripts in (True, False):
        context, left = _offline_context(browser, scripts=scripts)
        try:
            page, errors, asked = _open(context, report)
            page.get_by_role("heading", name=f"Report of job {job.id}", exact=True).wait_for()
            page.get_by_text(ending.headline(job.id), exact=True).wait_for()  # visible, with or without script
            for section in ("How it ended", "Headline figures", "Estimate beside the actual", "Final block",
                            "Summary", "Explorer", "Config and plan (masked)"):
                assert page.get_by_role("heading", name=section, exact=True).is_visible(), section
            chart = page.locator("figure img.chart")
            assert chart.evaluate("img => img.complete && img.naturalWidth > 0"), "the inline chart is drawn"
            assert page.get_by_role("row", name=f"Why it stopped {ending.stop.text}").is_visible()
            page.screenshot(path=str(SCREENSHOTS / f"report-file-{'script' if scripts else 'noscript'}.png"),
                            full_page=True)
            errors.assert_clean(where=f"report.html, scripts {'on' if scripts else 'off'}")
            assert left == [] and [u for u in asked if not u.startswith(("file:", "data:"))] == []

            page, errors, asked = _open(context, compared)
            page.get_by_role("heading", name=comparison.title).wait_for()
            assert page.get_by_role("cell", name=f"gepa_b.toml · {runs.jobs['gepa_b'].id}").is_visible()
            assert page.locator("figure img").first.evaluate("img => img.complete && img.naturalWidth > 0")
            page.screenshot(path=str(SCREENSHOTS / f"report-file-comparison{'' if scripts else '-noscript'}.png"),
                            full_page=True)
            errors.assert_clean(where="comparison.html")
            assert left == [] and [u for u in asked if not u.startswith(("file:", "data:"))] == []
        finally:
            context.close()
