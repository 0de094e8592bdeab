"""The widgets' front end loads with no network: every script and style the wizard and the panel's row
load is a file of ``synth_nb/static/`` (bundled by esbuild, committed, shipped in the wheel), and none of
those files names anything to fetch: no remote URL, no protocol-relative ``//host``, no import of a module
by URL or bare name, no ``@import``, no ``url(...)`` outside the file itself.

The browser half (the widgets load in JupyterLab and Notebook 7 with every non-local request aborted) is
``tests/browser/test_offline_load.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import anywidget
import pytest

from synth_nb.notebook.monitor_widgets import ActionButton, LiveRegion, ToggleButton
from synth_nb.notebook.wizard import Wizard

STATIC = Path(__file__).resolve().parents[2] / "synth_nb" / "static"
#: namespace names are identifiers, never fetched (``document.createElementNS``)
NAMESPACES = {"http://www.w3.org/1999/xhtml", "http://www.w3.org/2000/svg", "http://www.w3.org/1998/Math/MathML",
              "http://www.w3.org/1999/xlink", "http://www.w3.org/XML/1998/namespace", "http://www.w3.org/2000/xmlns/"}
#: a host to fetch from after any scheme (http, https, ws, ftp…) or after a protocol-relative ``"//``: a dotted
#: name, an IP address or localhost (``http://host:port``, a form's placeholder text, names none)
_HOST = r"(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]+|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]|localhost"
URL = re.compile(rf"""[a-z][a-z0-9+.-]*://(?:{_HOST})[^\s"'`)<>]*|["'`(]//(?:{_HOST})""", re.I)
#: what would load a module, a style or a file at run time (minified text: no space needed)
LOADS = (
    re.compile(r"""\bimport\s*\(\s*["'`]"""),  # import("x"): a dynamic import of a named module
    re.compile(r"""(?:^|[;}\s])import\s*[\w{*][^;]*?\bfrom\s*["'`]"""),  # import x from "y": left after bundling
    re.compile(r"""(?:^|[;}\s])import\s*["'`]"""),  # import "y"
    re.compile(r"@import\b"),
    re.compile(r"\burl\(\s*[\"']?(?!data:|#)"),  # url(...) of anything but inline data or a fragment
    re.compile(r"\bimportScripts\s*\("),
    re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*="""),  # markup with a source
)


def _bundles() -> list[Path]:
    return sorted(p for p in STATIC.iterdir() if p.suffix in {".js", ".css", ".mjs", ".html"})


def test_the_static_folder_holds_the_bundles() -> None:
    assert {p.name for p in _bundles()} >= {"wizard.js", "wizard.css", "monitor.js", "monitor.css", "live_region.js"}


@pytest.mark.parametrize("bundle", _bundles(), ids=lambda p: p.name)
def test_no_bundle_names_anything_to_fetch(bundle: Path) -> None:
    text = bundle.read_text(encoding="utf-8")
    urls = sorted({m.group(0) for m in URL.finditer(text)} - NAMESPACES)
    assert urls == [], f"{bundle.name} names remote URLs: {urls}"
    for pattern in LOADS:
        found = [text[max(0, m.start() - 40):m.end() + 40] for m in pattern.finditer(text)]
        assert found == [], f"{bundle.name} loads something at run time ({pattern.pattern}): {found}"


def test_the_scan_finds_what_it_looks_for() -> None:
    """The patterns catch a CDN import, a bare-name import left unbundled, a font URL and a remote image."""
    samples = ['import*as a from"https://esm.sh/morphdom@2";', 'import x from"morphdom";', 'await import("./x.js")',
               '@import "https://fonts.googleapis.com/css";', "src:url(fonts/a.woff2)", 'i.src="//cdn.example.com/a.png"',
               '<img src="x.png">']
    for sample in samples:
        assert URL.search(sample) or any(p.search(sample) for p in LOADS), sample
    assert not any(p.search('createElementNS("http://www.w3.org/1999/xhtml","div");a.from="x"') for p in LOADS)


@pytest.mark.parametrize("widget", [Wizard, ActionButton, ToggleButton, LiveRegion], ids=lambda w: w.__name__)
def test_every_widget_takes_its_script_and_style_from_the_static_folder(widget: type) -> None:
    """anywidget sends the file's text to the front end (no URL): the ESM and CSS are ``synth_nb/static`` files."""
    assert issubclass(widget, anywidget.AnyWidget)
    bundles = {p.read_text(encoding="utf-8") for p in _bundles()}
    sources = [getattr(widget, attribute, None) for attribute in ("_esm", "_css")]
    assert sources[0] is not None
    for source in filter(None, sources):  # anywidget keeps a file's text (read again when the file changes)
        assert str(source) in bundles, str(source)[:200]
