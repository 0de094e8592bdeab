"""Is the page clean? Uncaught script errors, console errors and outputs the front end drew as errors.

JupyterLab turns an output whose renderer threw into a stderr-styled block ("Javascript Error: …"), and a
widget whose model is gone into "Error displaying widget"; neither raises anything a test would see, so
every view the package draws is checked for them here, besides the page's own errors.
"""

from __future__ import annotations

import re
from typing import Any

#: errors the front ends raise or log on their own, with nothing but ``x = 1`` in the notebook (Notebook 7
#: 7.6 on startup: a settings schema it reads before it is loaded, and a file-browser command it lacks)
_NOISE = (
    re.compile(r"^Cannot read properties of undefined \(reading 'schema'\)$"),
    re.compile(r"^Command 'filebrowser:open-path' not registered\.$"),
)

#: outputs drawn as errors: a renderer that threw, a stream to stderr, a widget without its model
_ERROR_OUTPUTS = r"""
(root) => {
  const out = [];
  const sel = '[data-mime-type="application/vnd.jupyter.stderr"], .jp-mod-error, .jp-RenderedText.jp-mod-error';
  for (const el of root.querySelectorAll(sel)) out.push(`error-styled output: ${el.textContent.trim().slice(0, 200)}`);
  const text = root.innerText || "";
  for (const phrase of ["Javascript Error", "Error displaying widget", "Failed to load model class", "[Anywidget] Failed"]) {
    if (text.includes(phrase)) out.push(`output says ${JSON.stringify(phrase)}: ${text.slice(text.indexOf(phrase), text.indexOf(phrase) + 160)}`);
  }
  return out;
}
"""


class PageErrors:
    """Collects a page's uncaught exceptions and console errors from the moment it is attached."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", self._uncaught)
        page.on("console", self._console)

    def _uncaught(self, exc: Any) -> None:
        if not any(p.search(str(exc)) for p in _NOISE):
            self.errors.append(f"pageerror: {exc}")

    def _console(self, message: Any) -> None:
        if message.type == "error" and not any(p.search(message.text) for p in _NOISE):
            where = (message.location or {}).get("url", "")  # which resource failed to load
            self.errors.append(f"console.error: {message.text}" + (f" ({where})" if where else ""))

    def problems(self, root: Any = "body") -> list[str]:
        """Script errors so far plus error-styled outputs inside ``root`` (a selector or a locator)."""
        element = self.page.locator(root).first if isinstance(root, str) else root
        return [*self.errors, *element.evaluate(_ERROR_OUTPUTS)]

    def assert_clean(self, root: Any = "body", where: str = "") -> None:
        problems = self.problems(root)
        assert not problems, f"the page is not clean{f' ({where})' if where else ''}:\n" + "\n".join(problems)
