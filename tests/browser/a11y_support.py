"""Measuring accessibility in the page: focus, the accessibility tree, layout clipping and colour contrast.

Contrast is computed the way a user sees it: the text (or ring, or border) colour composited over the
stack of backgrounds behind it, every CSS colour syntax parsed by a canvas, WCAG's relative luminance.
"""

from __future__ import annotations

import re
from typing import Any

#: colour and layout functions, installed once per page as ``window.__synthA11y``
_LIB = r"""
() => {
  if (window.__synthA11y) return;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const parse = (color) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = "rgba(0, 0, 0, 0)";
    ctx.fillStyle = color;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const backdrop = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let base = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const css = (c) => `rgb(${c.slice(0, 3).map(Math.round).join(",")})`;
  const describe = (el) => `<${el.tagName.toLowerCase()}${el.getAttribute("data-key") ? ` ${el.getAttribute("data-key")}` : ""}`
    + `${el.className && typeof el.className === "string" ? ` .${el.className.split(" ").join(".")}` : ""}> `
    + JSON.stringify((el.textContent || el.value || "").trim().slice(0, 40));
  const visible = (el) => el.checkVisibility();
  const inert = (el) => Boolean(el.closest("button:disabled, input:disabled, select:disabled"));
  window.__synthA11y = { parse, over, backdrop, ratio, css, describe, visible, inert };
}
"""

_CONTRAST = r"""
(root) => {
  const { parse, over, backdrop, ratio, css, describe, visible, inert } = window.__synthA11y;
  const out = [];
  const parents = new Set();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeValue.trim() && n.parentElement && !n.parentElement.closest("option, style")) parents.add(n.parentElement);
  }
  for (const el of parents) {
    if (!visible(el) || inert(el)) continue;
    const s = getComputedStyle(el);
    const bg = backdrop(el);
    const fg = over(parse(s.color), bg);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (parseInt(s.fontWeight, 10) >= 700 && size >= 18.66);
    const r = ratio(fg, bg);
    if (r < (large ? 3 : 4.5)) out.push(`text ${describe(el)}: ${r.toFixed(2)}:1 (${css(fg)} on ${css(bg)})`);
  }
  // boundaries of text fields (1.4.11) and the problem badge on a step, on any tab colour
  for (const el of root.querySelectorAll("input[type=text], input[type=password], select")) {
    if (!visible(el) || inert(el)) continue;
    const s = getComputedStyle(el);
    const behind = backdrop(el.parentElement);
    const r = ratio(over(parse(s.borderTopColor), behind), behind);
    if (r < 3) out.push(`border ${describe(el)}: ${r.toFixed(2)}:1`);
  }
  for (const el of root.querySelectorAll(".synth-step-problems")) {
    const s = getComputedStyle(el);
    const behind = backdrop(el.parentElement);
    const r = Math.max(ratio(backdrop(el), behind), ratio(over(parse(s.borderTopColor), behind), behind));
    if (r < 3) out.push(`badge ${describe(el)}: ${r.toFixed(2)}:1 against its tab`);
  }
  return out;
}
"""

_RING = r"""
(root) => {
  const { parse, over, backdrop, ratio, css, describe } = window.__synthA11y;
  const el = document.activeElement;
  if (!el || !root.contains(el)) return null;
  const s = getComputedStyle(el);
  const behind = backdrop(el.parentElement);
  const ring = over(parse(s.outlineColor), behind);
  const width = parseFloat(s.outlineWidth);
  const r = ratio(ring, behind);
  const what = describe(el);
  if (s.outlineStyle === "none" || width < 2) return { what, problem: `no 2px focus ring (${s.outlineStyle} ${s.outlineWidth})` };
  return { what, problem: r < 3 ? `focus ring ${r.toFixed(2)}:1 (${css(ring)} on ${css(behind)})` : "" };
}
"""

_CLIPPED = r"""
(root) => {
  const { describe, visible } = window.__synthA11y;
  const out = [];
  const box = root.getBoundingClientRect();
  const area = root.closest(".jp-OutputArea-output") || root;
  if (area.scrollWidth > area.clientWidth + 1) out.push(`output area scrolls sideways: ${area.scrollWidth} > ${area.clientWidth}`);
  if (root.scrollWidth > root.clientWidth + 1) out.push(`root scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
  const limit = Math.min(box.right, area.getBoundingClientRect().right, window.innerWidth);
  const ctx = document.createElement("canvas").getContext("2d");
  const selectTextWidth = (el) => {
    ctx.font = getComputedStyle(el).font;
    return ctx.measureText(el.selectedOptions.length ? el.selectedOptions[0].text : "").width;
  };
  const controls = root.querySelectorAll("button, input, select, summary, label, img, table, [tabindex], "
    + ".synth-badge, .synth-status, .synth-live-region");
  for (const el of controls) {
    if (!visible(el)) continue;
    const b = el.getBoundingClientRect();
    if (!b.width) continue;
    if (b.left < box.left - 1 || b.right > limit + 1) out.push(`${describe(el)} spans ${Math.round(b.left)}-${Math.round(b.right)}, box ends at ${Math.round(limit)}`);
    const cut = el.tagName === "SELECT" ? selectTextWidth(el) > el.clientWidth - 20
      : !["INPUT", "IMG", "TABLE"].includes(el.tagName) && el.scrollWidth > el.clientWidth + 1;
    if (cut) out.push(`${describe(el)} cuts its own text`);
    for (let p = el.parentElement; p && p !== root; p = p.parentElement) {
      if (getComputedStyle(p).overflowX === "visible") continue;
      const pb = p.getBoundingClientRect();
      if (b.left < pb.left - 1 || b.right > pb.right + 1) out.push(`${describe(el)} is cut by ${describe(p)}`);
      break;
    }
  }
  return out;
}
"""

_SHAPE = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const cells = notebook.model.cells;
  return {count: cells.length, active: notebook.activeCellIndex,
          types: Array.from({length: cells.length}, (_, i) => cells.get(i).type)};
}"""


def _root(page: Any, root: Any) -> Any:
    page.evaluate(_LIB)
    return page.locator(root).first if isinstance(root, str) else root


def contrast_problems(page: Any, root: Any) -> list[str]:
    """Text below 4.5:1 (3:1 if large), field borders and step badges below 3:1, inside ``root``."""
    return list(_root(page, root).evaluate(_CONTRAST))


def clipped_controls(page: Any, root: Any) -> list[str]:
    """Controls outside ``root``, the output area or the window, or cut by a scrolling ancestor."""
    return list(_root(page, root).evaluate(_CLIPPED))


def focus_ring_problems(page: Any, root: Any, limit: int = 60) -> list[str]:
    """Tab through every control in ``root`` and measure each focus ring against what is behind it."""
    element = _root(page, root)
    element.locator("button, input, select, summary, [tabindex='0']").first.focus()
    page.keyboard.press("Shift+Tab")  # come back by keyboard, so the browser shows its keyboard focus style
    page.keyboard.press("Tab")
    problems, seen = [], []
    for _ in range(limit):
        ring = element.evaluate(_RING)
        if ring is None or ring["what"] in seen:
            break
        seen.append(ring["what"])
        if ring["problem"]:
            problems.append(f"{ring['what']}: {ring['problem']}")
        page.keyboard.press("Tab")
    assert len(seen) > 1, f"Tab did not move through {root!r}: {seen}"
    return problems


def notebook_shape(page: Any) -> dict[str, Any]:
    """Cell count, active cell and cell types of the open notebook: what command-mode shortcuts change."""
    return dict(page.evaluate(_SHAPE))


def flush(page: Any) -> None:
    """Let redraws the widget scheduled (``setTimeout(0)``) run before looking at the page."""
    page.evaluate("() => new Promise(r => setTimeout(r, 0)).then(() => new Promise(r => setTimeout(r, 0)))")


def active_key(page: Any) -> str | None:
    return page.evaluate("() => document.activeElement && document.activeElement.getAttribute('data-key')")


def wait_active(page: Any, key: str, timeout: float = 10_000) -> None:
    """Focus is on the control with ``data-key=key`` (waiting out a pending redraw), else say where it is."""
    flush(page)
    try:
        page.wait_for_function("k => document.activeElement && document.activeElement.getAttribute('data-key') === k",
                               arg=key, timeout=timeout)
    except Exception as exc:
        where = page.evaluate("() => document.activeElement ? document.activeElement.outerHTML.slice(0, 160) : null")
        raise AssertionError(f"focus is not on {key!r} but on {where}") from exc


def tab_to(page: Any, key: str, *, back: bool = False, limit: int = 40) -> list[str | None]:
    """Press Tab (or Shift+Tab) until the control ``key`` has focus; the keys passed on the way."""
    seen: list[str | None] = []
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        seen.append(active_key(page))
        if seen[-1] == key:
            return seen
    raise AssertionError(f"{'Shift+' if back else ''}Tab never reached {key!r}: {seen}")


def wait_live(page: Any, region: Any, text: str | re.Pattern[str], timeout: float = 30_000, *,
              same_node: bool = True) -> None:
    """The live region says ``text`` (or all of it matches the pattern; a trailing no-break space marks a
    repeat); by default it must be the very node that is there now: a region that is replaced is not reliably
    announced."""
    try:
        if same_node and isinstance(text, re.Pattern):
            page.wait_for_function("([el, p]) => el.isConnected && new RegExp(`^(?:${p})$`)"
                                   ".test(el.textContent.replace(/\\u00a0$/, ''))",
                                   arg=[region.element_handle(), text.pattern], timeout=timeout)
        elif same_node:
            page.wait_for_function("([el, t]) => el.isConnected && el.textContent.replace(/\\u00a0$/, '') === t",
                                   arg=[region.element_handle(), text], timeout=timeout)
        else:
            region.filter(has_text=text).wait_for(timeout=timeout)
    except Exception as exc:
        raise AssertionError(f"live region says {region.text_content()!r}, expected {text!r}") from exc


def ax_node(page: Any, locator: Any, attempts: int = 3) -> dict[str, Any]:
    """Role, name, description and states of one element, read from Chromium's accessibility tree.

    Tries again if the element was re-rendered between being marked and being read.
    """
    for attempt in range(attempts):
        try:
            return _ax_node(page, locator)
        except Exception as exc:
            if "Could not find node" not in str(exc) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def _ax_node(page: Any, locator: Any) -> dict[str, Any]:
    cdp = page.context.new_cdp_session(page)
    try:
        locator.evaluate("el => el.setAttribute('data-synth-ax-probe', '')")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node_id = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-synth-ax-probe]"})["nodeId"]
        node = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node_id, "fetchRelatives": False})["nodes"][0]
    finally:
        locator.evaluate("el => el.removeAttribute('data-synth-ax-probe')")
        cdp.detach()
    out: dict[str, Any] = {
        "role": node.get("role", {}).get("value"),
        "name": node.get("name", {}).get("value", ""),
        "description": node.get("description", {}).get("value", ""),
    }
    for prop in node.get("properties", []):
        out[prop["name"]] = prop["value"].get("value")
    return out


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme and wait until its colours apply."""
    name = "JupyterLab Dark" if theme == "dark" else "JupyterLab Light"
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    page.evaluate(_LIB)
    page.wait_for_function("""(dark) => {
        const [r, g, b] = window.__synthA11y.parse(getComputedStyle(document.body).getPropertyValue('--jp-layout-color1'));
        return document.body.dataset.jpThemeLight === String(!dark) && ((r + g + b) / 3 < 128) === dark;
    }""", arg=theme == "dark")
    flush(page)
