"""Shared browser fixtures: a real JupyterLab on 127.0.0.1 and headless Debian Chromium via Playwright.

* ``jupyter_server`` (session): ``jupyter lab`` on a free loopback port with fresh config, settings,
  workspace and runtime directories, a random token and the announcements toast disabled.
* ``browser`` (module): Playwright's sync API on ``/usr/bin/chromium`` (no browser download).
* ``lab`` (per test): a fresh folder under the server root plus a page, with helpers to write a
  notebook, open it in JupyterLab or Notebook 7, run cells, read outputs and take screenshots into
  ``artifacts/screenshots/``. Kernels started by the test are shut down afterwards.

Selectors stay on what we own (``.synth-wizard``, ``data-testid``) or on stable JupyterLab classes;
cells run through ``window.jupyterapp`` (``expose_app_in_browser``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest

from .page_errors import PageErrors

CHROMIUM = os.environ.get("SYNTH_NB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # a container's /dev/shm is 64 MB unless its runner says otherwise; a renderer that fills it crashes
    # ("Target crashed"), so Chromium keeps that shared memory in /tmp
    "--disable-dev-shm-usage",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
ACTIVE_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
PAGE_TIMEOUT_MS = 90_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class JupyterServer:
    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def lab_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{path}?reset&token={self.token}"

    def notebook7_url(self, path: str) -> str:
        return f"{self.url}/notebooks/{path}?token={self.token}"


def _start_server(base: Path) -> JupyterServer:
    root = base / "root"
    dirs = {name: base / name for name in ("config", "settings", "workspaces", "runtime", "data")}
    for path in [root, *dirs.values()]:
        path.mkdir(parents=True, exist_ok=True)
    labconfig = dirs["config"] / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["data"] / "ipython"),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("MPLBACKEND", None)  # leaks into kernels and disables inline PNGs (see the CI notes)
    log = base / "jupyter.log"
    cmd = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(cmd, cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = JupyterServer(f"http://127.0.0.1:{port}", token, root, process, log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early:\n{log.read_text()[-3000:]}")
        try:
            server.api("GET", "/api/status")
            return server
        except OSError:
            time.sleep(0.3)
    _stop(process)
    raise RuntimeError(f"jupyter lab did not answer within 90 s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server we started (and its kernels, in the same process group) by its own id."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    server = _start_server(tmp_path_factory.mktemp("jupyter"))
    try:
        yield server
    finally:
        _stop(server.process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module: sync Playwright marks an event loop as running in the main thread while
    it is open, so it is closed before a worker (pytest-xdist) goes on to tests that call ``asyncio.run``."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        raise RuntimeError("chromium is not installed: apt-get install chromium (see .ci/ensure-system-packages)")
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@dataclass
class Lab:
    """One test's folder on the server and one browser page, with notebook helpers."""

    server: JupyterServer
    page: Any
    folder: Path
    name: str
    shots: list[Path] = field(default_factory=list)
    errors: PageErrors = field(init=False)

    def __post_init__(self) -> None:
        self.errors = PageErrors(self.page)

    def assert_clean(self, root: Any = "body", where: str = "") -> None:
        """No script or console error so far and no output drawn as an error (see ``page_errors``)."""
        self.errors.assert_clean(root, where)

    @property
    def rel(self) -> str:
        return self.folder.relative_to(self.server.root).as_posix()

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        path = self.folder / name
        nbformat.write(nb, path)
        return path

    def open(self, name: str) -> None:
        """Open the notebook in JupyterLab and wait until its kernel is idle."""
        self.page.goto(self.server.lab_url(f"{self.rel}/{name}"))
        self.page.wait_for_selector(f"{ACTIVE_PANEL} .jp-Cell", timeout=PAGE_TIMEOUT_MS)
        self.wait_idle()

    def open_notebook7(self, name: str) -> None:
        """Open the notebook in Notebook 7 (the /notebooks/ front end) and wait for the kernel."""
        self.page.goto(self.server.notebook7_url(f"{self.rel}/{name}"))
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_TIMEOUT_MS)
        self.wait_idle()

    def _kernel_status(self) -> Any:
        return self.page.evaluate("""() => {
            const app = window.jupyterapp;
            const w = app && app.shell.currentWidget;
            const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
            return k ? k.status : null;
        }""")

    def wait_idle(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._kernel_status() == "idle":
                return
            time.sleep(0.2)
        raise AssertionError(f"kernel not idle after {timeout} s (status {self._kernel_status()!r})")

    def run_cell(self, index: int, *, wait: bool = True, timeout: float = 90) -> None:
        """Run cell ``index`` of the open notebook; by default wait until it has finished.

        The command's promise resolves only when the cell ends, so it is not awaited inside the page
        (a cell that runs for minutes would block ``page.evaluate``, which has no timeout); its
        completion is polled instead.
        """
        self.page.evaluate("""(i) => {
            const app = window.jupyterapp;
            const panel = app.shell.currentWidget;
            panel.content.activeCellIndex = i;
            window.__synthCellDone = false;
            app.commands.execute('notebook:run-cell').finally(() => { window.__synthCellDone = true; });
        }""", index)
        if wait:
            self.page.wait_for_function("() => window.__synthCellDone === true", timeout=timeout * 1000)
            self.wait_idle(timeout)

    def cell(self, index: int) -> Any:
        return self.page.locator(f"{ACTIVE_PANEL} .jp-Cell").nth(index)

    def output_text(self, index: int) -> str:
        return str(self.cell(index).locator(".jp-OutputArea").inner_text())

    def wait_output(self, index: int, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.output_text(index)
            if text in out:
                return out
            time.sleep(0.2)
        raise AssertionError(f"cell {index} output lacks {text!r}: {self.output_text(index)!r}")

    def screenshot(self, label: str, locator: Any = None) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.name}-{len(self.shots) + 1:02d}-{label}.png"
        (locator or self.page).screenshot(path=str(path))
        self.shots.append(path)
        return path

    def submitted_ids(self, index: int, count: int = 1) -> list[str]:
        """Once it submits, the wizard in cell ``index`` is replaced by what it sent: the job ids there."""
        sent = self.cell(index).locator(".synth-wizard-snapshot[data-testid=submitted]")
        sent.wait_for(timeout=60_000)
        assert self.cell(index).locator(".synth-wizard").count() == 0
        ids = [str(i) for i in sent.locator(".synth-job-id").all_inner_texts()]
        assert len(ids) == count, ids
        return ids

    def save(self) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        time.sleep(0.5)

    def shutdown_kernels(self) -> None:
        for session in self.server.api("GET", "/api/sessions") or []:
            if session.get("path", "").startswith(self.rel + "/"):
                self.server.api("DELETE", f"/api/sessions/{session['id']}")


@pytest.fixture
def lab(jupyter_server: JupyterServer, browser: Any, request: pytest.FixtureRequest) -> Iterator[Lab]:
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "-")
    folder = jupyter_server.root / name
    folder.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    for stale in SCREENSHOTS.glob(f"{name}-*.png"):
        stale.unlink()
    helper = Lab(jupyter_server, page, folder, name)
    try:
        yield helper
    finally:
        try:
            helper.shutdown_kernels()
        finally:
            context.close()
