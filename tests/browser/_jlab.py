"""A real JupyterLab on 127.0.0.1 driven by headless Debian Chromium (sync Playwright), for browser tests.

Isolated config/runtime/workspace/settings folders per server, a random token, ``--port-retries=0`` on a
free port, the news toast disabled, and the server stopped by its own process handle.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
VISIBLE_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JupyterLab:
    """One ``jupyter lab`` process serving ``root``; ``url(path)`` gives a tokenised page address."""

    def __init__(self, root: Path, state: Path, env: dict[str, str] | None = None) -> None:
        self.root, self.token, self.port = root, secrets.token_hex(16), free_port()
        dirs = {name: state / name for name in ("config", "runtime", "workspaces", "settings", "data")}
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        (dirs["config"] / "labconfig").mkdir(exist_ok=True)
        (dirs["config"] / "labconfig" / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        self.env = {**os.environ, **(env or {}), "JUPYTER_CONFIG_DIR": str(dirs["config"]),
                    "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]), "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
                    "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"])}
        self.env.pop("MPLBACKEND", None)  # leaks into kernels and breaks inline PNG (ci notes, pitfall 9)
        self.log = (state / "jupyter.log").open("w")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90.0) -> JupyterLab:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
             f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.root}", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly"],
            env=self.env, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.root,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}; see {self.log.name}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status?token={self.token}", timeout=2)
                return self
            time.sleep(0.3)
        raise TimeoutError("jupyter lab did not answer /api/status")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}&reset"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()


@contextlib.contextmanager
def running_lab(root: Path, state: Path, env: dict[str, str] | None = None) -> Iterator[JupyterLab]:
    lab = JupyterLab(root, state, env).start()
    try:
        yield lab
    finally:
        lab.stop()


@contextlib.contextmanager
def chromium_page(viewport: dict[str, int] | None = None) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=viewport or {"width": 1400, "height": 1000})
            page.set_default_timeout(90_000)
            yield page
        finally:
            browser.close()


def open_notebook(page: Any, lab: JupyterLab, name: str) -> None:
    """Open ``name`` and wait until its kernel is idle."""
    page.goto(lab.url(f"lab/tree/{name}"))
    page.wait_for_selector(f"{VISIBLE_NOTEBOOK} .jp-Cell", timeout=90_000)
    wait_kernel_idle(page)


def wait_kernel_idle(page: Any, timeout: float = 90_000) -> None:
    page.wait_for_function(
        "() => { const app = window.jupyterapp; const w = app && app.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return !!k && k.status === 'idle'; }", timeout=timeout)


def run_cell(page: Any, index: int) -> None:
    """Select cell ``index`` of the visible notebook and run it (does not wait for the result)."""
    page.evaluate(
        "(i) => { const w = window.jupyterapp.shell.currentWidget; w.content.activeCellIndex = i;"
        " w.content.deselectAll(); }", index)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")


def cell(page: Any, index: int) -> Any:
    return page.locator(f"{VISIBLE_NOTEBOOK} .jp-Notebook .jp-Cell").nth(index)


def wait_cell_done(page: Any, index: int, timeout: float = 90_000) -> None:
    """Wait until cell ``index`` shows an execution count (``[n]:``, not ``[*]:``)."""
    page.wait_for_function(
        "(i) => { const w = window.jupyterapp.shell.currentWidget; const c = w.content.widgets[i];"
        " return c.model.executionCount !== null && !c.node.querySelector('.jp-InputPrompt')"
        ".textContent.includes('*'); }", arg=index, timeout=timeout)


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    page.screenshot(path=str(path), full_page=False)
    return path
