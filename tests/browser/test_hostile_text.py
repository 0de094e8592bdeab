"""A backend whose every string is markup, rendered in a real JupyterLab (and Notebook 7): the panels of its
jobs (status, events, summary), the prompt-learning summary as written to ``summary.md``, the explorer,
the comparison and the jobs table. No script it carries runs (``window.__pwned`` stays unset), no element
it names is made (no ``javascript:`` link, no ``<img src=x>``, no event-handler attribute) and its text is
shown as the backend sent it.

The backend (``tests/hostile_text_backend.py``) is a real HTTP server in the test process; the notebook's
kernel attaches to its jobs with ``%synth_train --attach``, as a user would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hostile_text_backend import (
    FENCE_BREAKER,
    KEY,
    PAYLOADS,
    PL_JOB,
    RL_JOB,
    SFT_JOB,
    HostileBackend,
    serve_hostile_jobs,
)

pytestmark = pytest.mark.browser

#: whatever the kernel drew from the backend's text that a browser would act on
_MADE = r"""
(root) => {
  const found = [];
  for (const a of root.querySelectorAll("a[href]")) {
    if (/^\s*javascript:/i.test(a.getAttribute("href"))) found.push("javascript: link " + a.outerHTML.slice(0, 120));
  }
  for (const el of root.querySelectorAll("img[src='x'], svg[onload], details[ontoggle], iframe")) {
    found.push("element " + el.outerHTML.slice(0, 120));
  }
  for (const el of root.querySelectorAll(".jp-OutputArea *")) {
    for (const attr of el.getAttributeNames()) {
      if (attr.toLowerCase().startsWith("on")) found.push("handler " + attr + " on " + el.tagName);
    }
  }
  for (const s of root.querySelectorAll("script")) {
    if (s.textContent.includes("__pwned")) found.push("script " + s.textContent.slice(0, 120));
  }
  return found;
}
"""


def _cells(backend: HostileBackend) -> list[str]:
    attach = f"%synth_train --attach {{}} --backend {backend.url}"
    return [
        f"%load_ext synth_nb\nimport os\nos.environ['SYNTH_API_KEY'] = {KEY!r}\nprint('ready')",
        "pl = " + attach.format(PL_JOB),
        "sft = " + attach.format(SFT_JOB),
        "rl = " + attach.format(RL_JOB),
        "pl.explorer()",
        "from IPython.display import Markdown\nMarkdown(pl.explorer().to_markdown())",
        f"from pathlib import Path\nMarkdown(Path('results/{PL_JOB}/summary.md').read_text())",
        "import synth_nb\nsynth_nb.compare([pl, sft, rl])",
        "Markdown(synth_nb.compare([pl, sft, rl]).to_markdown())",
        "%synth_train --jobs",
    ]


@pytest.fixture(scope="module")
def hostile_backend() -> Iterator[HostileBackend]:
    with serve_hostile_jobs() as backend:
        yield backend


def _output(lab: Any, index: int) -> str:
    """What cell ``index`` shows, once it shows something (scrolled to first: a notebook draws only the
    cells near the view, and draws them a moment after they come into it)."""
    deadline = time.monotonic() + 30
    while True:
        lab.cell(index).scroll_into_view_if_needed()
        shown = str(lab.output_text(index))
        if shown.strip() or time.monotonic() > deadline:
            return shown
        time.sleep(0.3)


def _wait_output(lab: Any, index: int, text: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = _output(lab, index)
        if text in shown:
            return shown
        time.sleep(0.3)
    raise AssertionError(f"cell {index} does not show {text!r}: {_output(lab, index)!r}")


def _check(lab: Any, count: int, where: str) -> None:
    """No script of the backend's ran, and nothing it named was made, in any of the ``count`` cells."""
    for index in range(count):
        assert _output(lab, index).strip(), f"{where}: cell {index} shows nothing"
        lab.page.wait_for_timeout(300)  # an onerror fires once the broken image has failed to load
        made = lab.cell(index).evaluate(_MADE)
        assert made == [], f"{where}, cell {index}: {json.dumps(made, indent=1)}"
    assert lab.page.evaluate("() => window.__pwned") is None, f"a script from the backend ran ({where})"


def _run_all(lab: Any, count: int) -> None:
    """The attaching cells, until each panel shows its job's result (and the summary is written), then the rest."""
    for index in range(4):
        lab.run_cell(index, timeout=180)
    _wait_output(lab, 1, "Wrote summary.md")
    _wait_output(lab, 2, "SFT result")
    _wait_output(lab, 3, "RL result")
    for index in range(4, count):
        lab.run_cell(index, timeout=180)


def test_a_hostile_backends_text_is_shown_never_run_in_jupyterlab(lab: Any, hostile_backend: HostileBackend) -> None:
    cells = _cells(hostile_backend)
    lab.write_notebook("hostile.ipynb", cells)
    lab.open("hostile.ipynb")
    _run_all(lab, len(cells))
    _check(lab, len(cells), "JupyterLab")
    panel = _output(lab, 1)  # status, events and the summary, as the backend wrote them
    for name in ("img", "link", "script", "image", "autolink", "svg", "math", "entity"):
        assert PAYLOADS[name] in panel, name
    assert FENCE_BREAKER.splitlines()[1] in panel  # inside the prompt's own block, shown as text
    assert PAYLOADS["tick"] in _output(lab, 2)  # the SFT model id: a code span nothing breaks out of
    assert PAYLOADS["img"] in _output(lab, 3) and PAYLOADS["tick"] in _output(lab, 4)  # RL result, explorer
    assert f" to results/{PL_JOB}/" in panel  # where the panel says summary.md went, where cell 6 reads it
    assert PAYLOADS["img"] in _output(lab, 6)  # summary.md as a Markdown output
    assert PL_JOB in _output(lab, 7) and RL_JOB in _output(lab, 8)  # the comparison, as HTML and as Markdown
    lab.screenshot("hostile-panel", lab.cell(1))
    lab.save()
    lab.page.reload()  # the saved outputs, drawn again from the file
    lab.page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=90_000)
    _wait_output(lab, 1, "Prompt-learning summary", timeout=60)
    _check(lab, len(cells), "JupyterLab, reopened")


def test_a_hostile_backends_text_is_shown_never_run_in_notebook7(lab: Any, hostile_backend: HostileBackend) -> None:
    cells = [*_cells(hostile_backend)[:2], "from IPython.display import Markdown\nMarkdown(pl.explorer().to_markdown())"]
    lab.write_notebook("hostile7.ipynb", cells)
    lab.open_notebook7("hostile7.ipynb")
    for index in range(len(cells)):
        lab.run_cell(index, timeout=180)
    panel = _wait_output(lab, 1, "Wrote summary.md")
    _check(lab, len(cells), "Notebook 7")
    assert PAYLOADS["img"] in panel and PAYLOADS["math"] in panel
