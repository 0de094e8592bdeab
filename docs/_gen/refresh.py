"""Take the pictures and executed notebooks the docs show again, from the test journeys that make them.

Nothing under docs/images/, docs/snippets/ or docs/examples/ is made by hand: each screenshot is one a browser
journey in tests/browser saves (``artifacts/screenshots/<test>-NN-<label>.png``), cropped of the empty page
under it; each terminal screen is one a tmux journey in tests/cli keeps (``artifacts/terminal/``); each example
notebook is the copy tests/notebook/test_example_notebooks.py keeps of a run that passed
(``artifacts/notebooks/``). ``--run`` runs those tests first; without it, what their last run left is copied.
``make docs-images`` runs this with ``--run``. tests/docs checks that every picture the docs show is listed here.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SCREENSHOTS = REPO / "artifacts" / "screenshots"
EXECUTED = REPO / "artifacts" / "notebooks"
TERMINAL = REPO / "artifacts" / "terminal"

WIZARD_JOURNEY = "tests/browser/test_wizard.py::test_wizard_walkthrough_in_jupyterlab_and_notebook7"
MONITOR_JOURNEY = "tests/browser/test_monitor.py::test_live_chart_cancel_reattach_and_export"
#: docs/images/<name> -> (the journey that takes it, its screenshot label, pixels cut off at the top and at the
#: bottom): the live panel without the cell's code above it (a test folder's path); the GEPA panel without
#: JupyterLab's status bar under it
IMAGES = {
    "panel.png": (MONITOR_JOURNEY, "live-chart", 70, 0),
    "gepa-panel.png": (WIZARD_JOURNEY, "submitted-and-monitored", 0, 50),
    "wizard-preview.png": (WIZARD_JOURNEY, "preview", 0, 0),
}
#: docs/snippets/<name> -> (the terminal journey that keeps it, the capture it keeps): a screen read in tmux,
#: shown in a page as text (``--8<-- "<name>"``)
SCREENS = {
    "terminal-chart.txt": ("tests/cli/test_chart_journey.py::test_the_live_chart_reads_whole_at_both_sizes",
                           "chart-120x40.txt"),
}
#: docs/examples/<name>: the example notebooks shown with their outputs (the real-model one needs the
#: real-llm extra and a model server, so it is left out)
NOTEBOOKS = ("prompt_learning_gepa.ipynb", "prompt_learning_mipro.ipynb", "sft.ipynb", "rl.ipynb")
NOTEBOOK_TEST = "tests/notebook/test_example_notebooks.py::test_example_notebook_runs_and_keeps_its_results"
#: the test's temporary folders, as the folders a reader's own run uses: the embedded backend's data folder
#: and the notebook's output folder (``SYNTH_NB_OUTPUT_DIR``, else ``results``); a path in the notebook's own folder
#: (a job's files next to its config) as the relative path a reader sees from there
TEST_FOLDERS = (
    (re.compile(r"/[^\s\"'()]*?pytest-of-[^/]+/pytest-\d+/(?:popen-gw\d+/)?shared-backend\d*"), ".synth_nb/backend"),
    (re.compile(r"/[^\s\"'()]*?pytest-of-[^/]+/pytest-\d+/(?:popen-gw\d+/)?test_\w+?\d*/out\b"), "results"),
    (re.compile(r"/[^\s\"'()]*?pytest-of-[^/]+/pytest-\d+/(?:popen-gw\d+/)?test_\w+?\d*/example_notebooks/"), ""),
)


def _run(tests: list[str], marker: str) -> None:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker, *tests]
    subprocess.run(command, cwd=REPO, check=True)


def _cropped(source: Path, target: Path, top: int, bottom: int) -> None:
    """The screenshot without the rows of plain page colour under the content (an element taller than the
    viewport is captured with the window's empty background below it), then less ``top`` and ``bottom``
    pixels."""
    from PIL import Image, ImageChops

    image = Image.open(source).convert("RGB")
    background = Image.new("RGB", image.size, image.getpixel((image.width - 1, image.height - 1)))
    box = ImageChops.difference(image, background).getbbox()
    height = image.height if box is None else min(image.height, box[3])
    image.crop((0, top, image.width, height - bottom)).save(target, optimize=True)


def refresh(run: bool) -> list[Path]:
    if run:
        _run(sorted({test for test, *_rest in IMAGES.values()}), "browser")
        _run([f"{NOTEBOOK_TEST}[{name}]" for name in NOTEBOOKS], "notebook")
        _run(sorted({test for test, _capture in SCREENS.values()}), "not browser")
    written = []
    (DOCS / "images").mkdir(exist_ok=True)
    for name, (test, label, top, bottom) in IMAGES.items():
        test_name = test.rsplit("::", 1)[-1]
        shots = sorted(SCREENSHOTS.glob(f"{test_name}-[0-9][0-9]-{label}.png"))
        if not shots:
            raise SystemExit(f"no screenshot {test_name}-NN-{label}.png in {SCREENSHOTS}: run {test} (or --run)")
        _cropped(shots[-1], DOCS / "images" / name, top, bottom)
        written.append(DOCS / "images" / name)
    (DOCS / "snippets").mkdir(exist_ok=True)
    for name, (test, capture) in SCREENS.items():
        if not (TERMINAL / capture).is_file():
            raise SystemExit(f"no {capture} in {TERMINAL}: run {test} (or --run)")
        (DOCS / "snippets" / name).write_text((TERMINAL / capture).read_text(encoding="utf-8"), encoding="utf-8")
        written.append(DOCS / "snippets" / name)
    for name in NOTEBOOKS:
        source = EXECUTED / name
        if not source.is_file():
            raise SystemExit(f"no executed {name} in {EXECUTED}: run {NOTEBOOK_TEST} (or --run)")
        text = source.read_text(encoding="utf-8")
        for pattern, shown in TEST_FOLDERS:
            text = pattern.sub(shown, text)
        (DOCS / "examples" / name).write_text(text, encoding="utf-8")
        written.append(DOCS / "examples" / name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="run the journeys first (browser and notebook tests)")
    for path in refresh(parser.parse_args().run):
        print(path.relative_to(REPO))


if __name__ == "__main__":
    main()
