"""The documentation site: it builds offline with no warning (``mkdocs build --strict``), its generated
reference holds every flag of every ``synth-nb`` command and every ``%synth_train`` argument, the tutorials'
terminal commands run as written, every picture it shows comes from a test journey, and the README stays
short and links into it.

The build runs in the background while the tutorials' commands run, so the two overlap.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.xdist_group("docs")

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

def _load(path: Path) -> ModuleType:
    """A module of docs/_gen, which is no package (it holds what the docs' pictures and notebooks are)."""
    spec = importlib.util.spec_from_file_location(f"docs_gen_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


refresh = _load(DOCS / "_gen" / "refresh.py")

#: the line that marks the next fenced block of a tutorial as commands the tests run
RUN_MARK = "<!-- run -->"
#: the settings a run could pick up from the shell that runs the suite
INHERITED = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY",
             "SYNTH_SKIP_TASK_APP_HEALTH_CHECK")
#: a page that makes the browser fetch something from elsewhere: a script, a stylesheet, a font service
FETCHES = re.compile(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)=["']https?://|fonts\.googleapis|fonts\.gstatic""")


class Build:
    def __init__(self, site: Path, process: subprocess.Popen[str]) -> None:
        self.site, self.process = site, process
        self._result: tuple[int, str] | None = None

    def result(self) -> tuple[int, str]:
        if self._result is None:
            output, _ = self.process.communicate(timeout=600)
            self._result = (self.process.returncode, output)
        return self._result

    def page(self, path: str) -> str:
        code, output = self.result()
        assert code == 0, output
        return html.unescape((self.site / path).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Build]:
    """``mkdocs build --strict`` of the repository's docs into a temporary folder, started at once."""
    work = tmp_path_factory.mktemp("docs-build")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
               "--site-dir", str(work / "site")]
    process = subprocess.Popen(command, cwd=work, env=env, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    running = Build(work / "site", process)
    try:
        yield running
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def runnable_commands(page: Path) -> list[str]:
    """The lines of each fenced block that follows a ``<!-- run -->`` line of ``page``."""
    commands, lines = [], page.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        if line.strip() != RUN_MARK:
            continue
        assert lines[index + 1].startswith("```"), f"{page.name}:{index + 2}: {RUN_MARK} must precede a fenced block"
        end = lines.index("```", index + 2)
        commands += [c for c in lines[index + 2:end] if c.strip() and not c.lstrip().startswith("#")]
    return commands


def test_the_tutorials_terminal_commands_run_as_written(build: Build, tmp_path: Path) -> None:
    from synth_nb.local.shared import stop_backend

    pages = sorted((DOCS / "tutorials").glob("*.md"))
    commands = [(page.name, command) for page in pages for command in runnable_commands(page)]
    assert any("--dry-run" in c for _p, c in commands) and any("--check" in c for _p, c in commands)
    # the tutorials work in a copy of the examples (their configs and data), on an embedded backend of their own
    folder = tmp_path / "my-first-run"
    for part in ("configs", "data"):
        shutil.copytree(REPO / "example_notebooks" / part, folder / part, ignore=shutil.ignore_patterns("results"))
    data_dir = tmp_path / "backend"
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    env.update(SYNTH_NB_BACKEND_DIR=str(data_dir), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    try:
        for page, command in commands:
            done = subprocess.run(command, shell=True, cwd=folder, env=env, stdin=subprocess.DEVNULL, text=True,
                                  capture_output=True, timeout=300)
            said = (done.stdout + done.stderr)[-3000:]
            assert done.returncode == 0, f"{page}: `{command}` exited {done.returncode}:\n{said}"
            assert "Traceback" not in said, f"{page}: `{command}`:\n{said}"
    finally:
        stop_backend(data_dir)


def test_the_site_builds_offline_with_no_warning(build: Build) -> None:
    code, output = build.result()
    assert code == 0, output
    assert "WARNING" not in output, output
    pages = list(build.site.rglob("*.html"))
    assert len(pages) > 30
    fetching = [str(p.relative_to(build.site)) for p in pages if FETCHES.search(p.read_text(encoding="utf-8"))]
    assert not fetching, f"pages that fetch from elsewhere: {fetching}"


#: an option line of argparse's --help: two spaces, then the option strings (each maybe with its value)
OPTION_LINE = re.compile(r"^  (-\S.*?)(?:\s{2,}|$)")


def shown_flags(*argv: str) -> set[str]:
    """Every option string ``synth-nb ARGV --help`` lists (printed wide: no option is wrapped)."""
    from synth_nb.cli.main import main

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "1000")
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as ended:
            main([*argv, "--help"])
    assert ended.value.code == 0
    flags = set()
    for line in out.getvalue().splitlines():
        match = OPTION_LINE.match(line)
        if match:
            flags |= {part.split()[0] for part in match.group(1).split(", ")}
    return flags - {"-h", "--help"}


def test_every_flag_of_every_command_is_in_the_generated_reference(build: Build) -> None:
    from synth_nb.cli.main import COMMANDS

    reference = build.page("reference/cli.html")
    for command in COMMANDS:
        flags = shown_flags(command)
        assert f"synth-nb {command}" in reference
        missing = sorted(f for f in flags if f"<code>{f}</code>" not in reference)
        assert not missing, f"synth-nb {command}: flags missing from reference/cli: {missing}"
    train = shown_flags("train")
    assert {"--dry-run", "--check", "--rollout-budget", "--report-to"} <= train  # a flow's own flag among them


def test_every_magic_argument_is_in_the_generated_reference(build: Build) -> None:
    from synth_nb.notebook.magics import SynthMagics

    reference = build.page("reference/magic.html")
    parser = SynthMagics.synth_train.parser  # type: ignore[attr-defined]
    shown = [action for action in parser._actions if action.help != argparse.SUPPRESS]  # as %synth_train? lists them
    names = [flag for action in shown for flag in action.option_strings] + [
        str(action.metavar) for action in shown if not action.option_strings]
    assert "--yes" in names and "--wait" in names and "--train-seeds" in names
    missing = sorted(name for name in names if f"<code>{name}</code>" not in reference)
    assert not missing, f"%synth_train arguments missing from reference/magic: {missing}"


def test_config_keys_and_exit_codes_are_generated_from_the_code(build: Build) -> None:
    from synth_nb import errors
    from synth_nb.flows.registry import all_flows

    keys = build.page("reference/config-keys.html")
    for flow in all_flows():
        assert f"Top level ({flow.name})" in keys
        for name in flow.config_model.model_fields:
            assert f"<code>{name}</code>" in keys, (flow.name, name)
    assert "<code>[prompt_learning.gepa.rollout]</code>" in keys and "<code>budget</code>" in keys
    codes = build.page("reference/exit-codes.html")
    for name, cls in vars(errors).items():
        if isinstance(cls, type) and issubclass(cls, errors.SynthNbError):
            assert f"<code>{name}</code>" in codes
    api = build.page("reference/api.html")
    for name in ("report_to", "explorer", "metrics_df", "compare", "Comparison"):
        assert name in api, name


def test_every_picture_screen_and_notebook_the_docs_show_comes_from_a_journey() -> None:
    pictures = {Path(m).name for page in DOCS.rglob("*.md")
                for m in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8"))}
    assert pictures, "the docs show the panel"
    assert pictures <= set(refresh.IMAGES), f"pictures no journey takes: {sorted(pictures - set(refresh.IMAGES))}"
    assert {p.name for p in (DOCS / "images").iterdir()} == set(refresh.IMAGES)
    assert {p.name for p in (DOCS / "examples").glob("*.ipynb")} == set(refresh.NOTEBOOKS)
    screens = {Path(m).name for page in DOCS.rglob("*.md")
               for m in re.findall(r'--8<-- "([^"]+)"', page.read_text(encoding="utf-8"))}
    assert screens == set(refresh.SCREENS) == {p.name for p in (DOCS / "snippets").iterdir()}
    for name in refresh.NOTEBOOKS:  # shown with the outputs of a run, not as bare code
        text = (DOCS / "examples" / name).read_text(encoding="utf-8")
        cells = json.loads(text)["cells"]
        assert any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code"), name
        assert "pytest-of" not in text and "/tmp/" not in text, f"{name} shows a test's temporary folder"


def test_the_readme_is_short_and_its_links_resolve() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 160
    links = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert not [link for link in local if not (REPO / link).exists()], "README links to missing files"
    for section in ("tutorials", "how-to", "reference", "explanation"):
        assert any(link.startswith(f"docs/{section}/") for link in local), f"README links to no {section} page"
    assert "make demo" in readme and "make test" in readme and "make docs" in readme
    # a real final block: its stop reason and each figure beside the estimate it was sent with
    trust = readme.split("## Runs you can trust", 1)[1].split("\n## ", 1)[0]
    block = trust.split("```", 2)[1]
    assert "Final status: succeeded" in block and "  stopped:  succeeded: " in block
    for figure in ("rollouts", "tokens", "time"):
        assert re.search(rf"^  {figure}: .* · estimate .* · ×\d+\.\d\d$", block, re.M), figure
