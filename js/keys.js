// Which keys pressed in a synth-nb view stay in it, and which the notebook gets.
//
// JupyterLab's and Notebook 7's command-mode shortcuts are single keys (`a`, `b`, `m`, `d d`, arrows): pressed on
// a focused button of the wizard or of a panel they would edit the notebook, so the view's controls carry
// `data-lm-suppress-shortcuts` (Lumino stops looking for a shortcut at the first element that has it). That
// attribute also hides the combinations a user means for the notebook (Ctrl/Cmd+S saves, Ctrl/Cmd+Shift+C opens
// the command palette, Ctrl/Cmd+Enter runs the cell): those are handed on here, as a copy of the key event sent
// from the same element with the attribute lifted for that moment, so the front end sees what it would see
// without the view. Escape leaves the view for its cell, as it leaves a cell's editor.

export const SUPPRESS = "data-lm-suppress-shortcuts";

/** Combinations that edit or select text where text is typed or read: they stay in the field. */
const TEXT_KEYS = new Set(["a", "c", "v", "x", "z", "y", "arrowleft", "arrowright", "arrowup", "arrowdown", "home",
  "end", "backspace", "delete"]);
const MODIFIERS = new Set(["Control", "Meta", "Shift", "Alt", "AltGraph", "CapsLock", "OS"]);
/** Copies of key events on their way to the notebook: the view lets them pass untouched. */
const forwarded = new WeakSet();

/** True where the element's own text is typed or selected (a text field, a text area, a payload `<pre>`). */
export function holdsText(el) {
  if (!el || !el.tagName) return false;
  if (el.tagName === "TEXTAREA" || el.tagName === "PRE" || el.isContentEditable) return true;
  return el.tagName === "INPUT" && !["button", "checkbox", "radio", "submit", "reset", "image", "file", "range",
    "color"].includes(el.type);
}

/**
 * What a keydown means for the view: "notebook" (a Ctrl/Cmd combination the notebook should get), "leave"
 * (Escape: back to the cell), or "own" (everything else: the view's, and no shortcut's). Pure: `key` and the
 * modifier flags of a KeyboardEvent, and whether the focused element holds text.
 */
export function keyRoute({ key, ctrlKey, metaKey }, text = false) {
  if (!key || MODIFIERS.has(key)) return "own";
  if (key === "Escape") return "leave";
  if (!ctrlKey && !metaKey) return "own";
  return text && TEXT_KEYS.has(key.toLowerCase()) ? "own" : "notebook";
}

/** Send a copy of `event` from its target with `view`'s shortcut guard lifted; the original then does nothing more. */
export function forwardToNotebook(event, view) {
  const target = event.target;
  const lifted = [];
  for (let n = target; n; n = n.parentElement) {
    if (n.hasAttribute && n.hasAttribute(SUPPRESS)) {
      lifted.push(n);
      n.removeAttribute(SUPPRESS);
    }
    if (n === view) break;
  }
  const copy = new KeyboardEvent(event.type, {
    key: event.key, code: event.code, location: event.location, repeat: event.repeat, ctrlKey: event.ctrlKey,
    metaKey: event.metaKey, shiftKey: event.shiftKey, altKey: event.altKey, bubbles: true, cancelable: true,
    composed: true,
  });
  // Lumino reads the legacy keyCode, which a KeyboardEvent made in script does not carry
  for (const name of ["keyCode", "which"]) Object.defineProperty(copy, name, { get: () => event[name] });
  forwarded.add(copy);
  try {
    target.dispatchEvent(copy);
  } finally {
    for (const n of lifted) n.setAttribute(SUPPRESS, "true");
  }
  if (copy.defaultPrevented) event.preventDefault(); // a shortcut took it: no browser default (Save Page…)
}

/** The cell `el` sits in (JupyterLab, Notebook 7), or null elsewhere. */
export function cellOf(el) {
  return el.closest(".jp-Cell") || null;
}

/**
 * Handle a keydown inside `view` (a listener on the view's root): single keys stay in the view, Ctrl/Cmd
 * combinations go to the notebook, Escape puts the focus on the cell. Returns what happened ("own",
 * "notebook", "leave", or "passed" for a copy on its way to the notebook), so the view can go on with its
 * own keys.
 */
export function routeKey(event, view) {
  if (forwarded.has(event)) return "passed";
  event.stopPropagation(); // the notebook's command-mode shortcuts must not see keys typed in the view
  const route = keyRoute(event, holdsText(event.target));
  if (route === "notebook") {
    forwardToNotebook(event, view);
  } else if (route === "leave") {
    const cell = cellOf(view);
    if (cell) {
      event.preventDefault();
      cell.focus();
    }
  }
  return route;
}
