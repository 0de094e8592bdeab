// Both widgets' views learn that their kernel is gone, say so, and then leave a static copy of themselves
// in the notebook instead of a widget output, so a notebook saved after a kernel restart or crash reopens
// with what the view last showed rather than "Error displaying widget: model not found".
//
// The kernel itself replaces its live outputs before it stops (synth_nb/notebook/live_output.py), but on a
// restart JupyterLab drops what the old kernel sends, after a crash there is no kernel to send anything, and
// "Close and Shut Down Notebook" disposes of the notebook without saving it again once the kernel's
// replacements have come: so the front end does it here too, and when the notebook's own session shuts its
// kernel down it saves the notebook with the static copies in place, so the file on disk needs no kernel.

const DISCONNECTED = "jupyter-widgets-disconnected";
const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const OUTPUT = "jp-OutputArea-output";
/** Set on an output whose static copy is on its way (all views inside it share one copy). */
const FROZEN = "data-synth-frozen";
/** What the notebook's session says when it shuts its kernel down (before the request is sent). */
const SHUTDOWN = "terminating";

/**
 * Kernel statuses that end the kernel holding the widgets' models: a restart (JupyterLab says "restarting"
 * first, also before an automatic restart after a crash), a death, or a shutdown the notebook's session
 * asked for ("terminating", said before the request leaves: Kernel → Shut Down Kernel, File → Close and Shut
 * Down Notebook). A websocket that drops and comes back to the same kernel goes through "unknown" and keeps
 * the models: that is not a gone kernel. The kernel's own snapshots (live_output.py), sent to the same
 * display ids while it shuts down, take the copies' places in a notebook that stays open.
 */
export const GONE_STATUSES = new Set(["restarting", "autorestarting", "dead", SHUTDOWN]);

/**
 * What tells of the kernel's status in ipywidgets' manager: the notebook's session (JupyterLab, Notebook 7:
 * the very signal on which the manager marks its models disconnected), a console's kernel connection, or
 * null in other front ends.
 */
export function statusSourceOf(manager) {
  const listenable = (source) => Boolean(source && source.statusChanged
    && typeof source.statusChanged.connect === "function");
  try {
    const session = manager && manager.context ? manager.context.sessionContext : null;
    if (listenable(session)) return session;
    const kernel = manager ? manager.kernel : null;
    return listenable(kernel) ? kernel : null;
  } catch {
    return null; // a disposed manager
  }
}

/** Call `gone(status)` once `source` reports a gone status; returns a function that stops listening. */
export function onGoneStatus(source, gone) {
  const listener = (_, status) => { if (GONE_STATUSES.has(status)) gone(status); };
  source.statusChanged.connect(listener);
  return () => source.statusChanged.disconnect(listener);
}

/** The notebook model behind ipywidgets' manager (JupyterLab, Notebook 7), or null elsewhere. */
export function notebookOf(model) {
  try {
    const notebook = model && model.widget_manager && model.widget_manager.context
      && model.widget_manager.context.model;
    return notebook && notebook.cells ? notebook : null;
  } catch {
    return null; // a disposed manager
  }
}

/**
 * Replace, through the cells' output models (as an `update_display_data` would), every rich output of
 * `notebook` for which `rewrite(data)` returns new data: the output area draws it and the notebook saves
 * it. Returns how many outputs were replaced.
 */
export function rewriteOutputs(notebook, rewrite) {
  let replaced = 0;
  const cells = notebook.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    const outputs = cell.type === "code" ? cell.outputs : null;
    if (!outputs) continue;
    for (let j = 0; j < outputs.length; j++) {
      const output = outputs.get(j);
      if (output.type !== "display_data" && output.type !== "execute_result") continue;
      const data = rewrite(output.data);
      if (!data) continue;
      const value = { output_type: output.type, data, metadata: output.metadata || {} };
      if (output.type === "execute_result") value.execution_count = output.executionCount;
      outputs.set(j, value);
      replaced += 1;
    }
  }
  return replaced;
}

/** Put `bundle` in place of every output of `notebook` that shows one of the widget models `ids`. */
export function replaceWidgetOutputs(notebook, ids, bundle) {
  return rewriteOutputs(notebook, (data) => {
    const view = data[WIDGET_VIEW];
    return view && ids.has(view.model_id) ? { ...bundle } : null;
  });
}

/** The widget model ids shown by outputs of `notebook`. */
function widgetOutputIds(notebook) {
  const ids = new Set();
  for (let i = 0; i < notebook.cells.length; i++) {
    const cell = notebook.cells.get(i);
    const outputs = cell.type === "code" ? cell.outputs : null;
    for (let j = 0; outputs && j < outputs.length; j++) {
      const view = outputs.get(j).data[WIDGET_VIEW];
      if (view && view.model_id) ids.add(view.model_id);
    }
  }
  return ids;
}

/** Which of the notebook's displayed widget models has a view inside the output element `area`. */
async function idsShownIn(area, manager, notebook) {
  const found = new Set();
  for (const id of widgetOutputIds(notebook)) {
    try {
      const model = await manager.get_model(id);
      const views = await Promise.all(Object.values((model && model.views) || {}));
      if (views.some((view) => view && view.el && area.contains(view.el))) found.add(id);
    } catch {
      // a model this manager never had (an output of an older session): not ours
    }
  }
  return found;
}

/**
 * The widget's own stylesheet for its static copy, scoped to the copy: the notebook reopened without the
 * widget's module has no other, and an output's HTML is drawn inside JupyterLab's rendered-HTML styles
 * (list bullets, paragraph margins), which the doubled class outranks. Nothing for a stylesheet served
 * from a URL (anywidget's development mode).
 */
export function scopedStyle(css) {
  if (typeof css !== "string" || !css.trim() || /^https?:\/\//.test(css.trim())) return "";
  return `<style>.synth-frozen.synth-frozen { ${css.replace(/<\//g, "<\\/")} }</style>`;
}

const BLOCKS = new Set(["ARTICLE", "BR", "DETAILS", "DIV", "FIELDSET", "FORM", "H1", "H2", "H3", "H4", "H5", "H6",
  "HEADER", "LEGEND", "LI", "OL", "P", "SECTION", "SUMMARY", "TABLE", "TR", "UL"]);

/**
 * The text a static copy shows, one line per block, hidden parts left out. Read from the copy without
 * laying the page out (`innerText` would, and draw ipywidgets' "disconnected" glyph, loading its font).
 */
export function plainText(root) {
  const lines = [""];
  const walk = (node) => {
    if (node.nodeType === 3) { lines[lines.length - 1] += node.textContent; return; }
    if (node.nodeType !== 1 || node.hidden || (node.style && node.style.display === "none")
      || node.tagName === "STYLE" || node.tagName === "SCRIPT") return;
    const block = BLOCKS.has(node.tagName);
    if (block) lines.push("");
    for (const child of node.childNodes) walk(child);
    if (block) lines.push("");
  };
  walk(root);
  return lines.map((line) => line.replace(/\s+/g, " ").trim()).filter(Boolean).join("\n");
}

const MASK = "\u2022\u2022\u2022\u2022";
/** The shapes synth_nb.secrets.redact masks: a URL's `user:password@`, and tokens shaped like keys. */
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#\s]+)@/g;
const TOKEN = /(?<![A-Za-z0-9])(?:(?:sk|pk|rk|gsk|ghp|gho|ghu|ghs|github_pat|hf|xox[abprs])[-_][A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|[A-Za-z0-9]{16,})(?![A-Za-z0-9])/g;

/**
 * `text` as a static copy may keep it: credentials in a URL and key-shaped tokens masked as the kernel masks
 * them (at most the last 4 characters of a token of 12 or more), for a value typed into a field that the
 * kernel never saw masked (it was not committed yet).
 */
export function maskedValue(text) {
  const keyShaped = (m) => m.startsWith("AIza") || /[^A-Za-z0-9]/.test(m) || (/[A-Za-z]/.test(m) && /[0-9]/.test(m));
  return String(text)
    .replace(TOKEN, (m) => (keyShaped(m) ? (m.length < 12 ? MASK : MASK + m.slice(-4)) : m))
    .replace(USERINFO, (_, scheme) => `${scheme}${MASK}@`);
}

/**
 * What the output shows now, as static HTML that does nothing: controls disabled, out of the Tab order,
 * the values typed into text fields kept, masked (never a password field's), plus its text for plain renderers.
 * ipywidgets' "disconnected" mark is left out: the copy is no widget, and its words say the kernel is gone.
 */
export function staticCopy(area, css = "") {
  const copy = area.cloneNode(true);
  const live = area.querySelectorAll("input, select, textarea");
  const copied = copy.querySelectorAll("input, select, textarea");
  live.forEach((field, k) => {
    const target = copied[k];
    if (field.type === "password") target.removeAttribute("value");
    else if (field.type === "checkbox" || field.type === "radio") target.toggleAttribute("checked", field.checked);
    else if (field.tagName === "TEXTAREA") target.textContent = maskedValue(field.value);
    else if (field.tagName === "INPUT") target.setAttribute("value", maskedValue(field.value));
  });
  for (const control of copy.querySelectorAll("button, input, select, textarea")) control.setAttribute("disabled", "");
  for (const node of copy.querySelectorAll("[tabindex], [contenteditable]")) {
    node.setAttribute("tabindex", "-1");
    node.removeAttribute("contenteditable");
  }
  for (const node of copy.querySelectorAll("[aria-live]")) node.setAttribute("aria-live", "off"); // no longer news
  for (const node of copy.querySelectorAll(`.${DISCONNECTED}`)) node.classList.remove(DISCONNECTED);
  const html = `<div class="synth-frozen">${scopedStyle(css)}${copy.innerHTML}</div>`;
  return { "text/html": html, "text/plain": plainText(copy) };
}

/** Per output element: which widget models it shows, looked up once while the kernel is there. */
const shownIds = /* @__PURE__ */ new WeakMap();
/** Per notebook model: the static copies on their way, which a save after a shutdown waits for. */
const copying = /* @__PURE__ */ new WeakMap();
/** Document contexts with a save after a shutdown on its way (one save for all the views). */
const saving = /* @__PURE__ */ new WeakSet();

function idsOf(area, model, notebook) {
  let ids = shownIds.get(area);
  if (!ids) {
    ids = idsShownIn(area, model.widget_manager, notebook);
    shownIds.set(area, ids);
    const forget = () => shownIds.delete(area);
    ids.then((found) => { if (!found.size) forget(); }, forget); // not drawn yet: ask again later
  }
  return ids;
}

/**
 * Put the static copy in the output's place once every view in it has drawn its "gone" state: `soon`
 * (all of them heard the same status change) right after the current task, before the page is drawn
 * again; otherwise (each view found out on its own) after the views pending now. One view per output
 * passes it to `whenKernelGone` (the wizard; a button row's live region): the others leave it out of
 * their script, which every saved notebook with widget state stores once per widget.
 */
export function freezeOutput(el, model, soon, status = null) {
  const notebook = notebookOf(model);
  const area = el.closest(`.${OUTPUT}`);
  if (status === SHUTDOWN) saveWhenCopied(model); // scheduled now: it runs after every view heard the status
  if (!notebook || !area || area.hasAttribute(FROZEN)) return;
  area.setAttribute(FROZEN, "");
  const freeze = async () => {
    try {
      if (!area.isConnected) return;
      const ids = await idsOf(area, model, notebook);
      if (ids.size) replaceWidgetOutputs(notebook, ids, staticCopy(area, model.get("_css")));
    } catch (err) {
      // the live view still says the kernel is gone; only the saved notebook keeps the widget reference
      console.warn("synth-nb: could not replace a widget whose kernel is gone by a static copy", err);
    }
  };
  const done = new Promise((resolve) => {
    const run = () => freeze().then(resolve);
    if (soon) queueMicrotask(run);
    else setTimeout(run, 0);
  });
  copying.set(notebook, [...(copying.get(notebook) || []), done]);
}

/** Ask, while the kernel is there, which widget models the output `area` shows (a shutdown's copy is made at once). */
export function prepareFreeze(area, model) {
  const notebook = notebookOf(model);
  if (notebook) idsOf(area, model, notebook).catch(() => {});
}

/**
 * What a view that puts its output's static copy in place passes to `whenKernelGone` (the others pass nothing,
 * and their bundles leave all of this out).
 */
export const FREEZE = { copy: freezeOutput, prepare: prepareFreeze };

/**
 * The notebook's session is shutting its kernel down: save the notebook once every view has put its static
 * copy in place (the views all heard the status before this runs), so the file on disk needs no kernel,
 * whether the notebook then stays open (Shut Down Kernel) or is closed without another save (Close and Shut
 * Down Notebook). What else is unsaved is saved with it, as JupyterLab's autosave would.
 */
export function saveWhenCopied(model) {
  const manager = model && model.widget_manager;
  const context = manager && manager.context;
  const notebook = notebookOf(model);
  if (!notebook || !context || typeof context.save !== "function" || saving.has(context)) return;
  saving.add(context);
  queueMicrotask(async () => {
    try {
      await Promise.all(copying.get(notebook) || []);
      if (!context.isDisposed) await context.save();
    } catch (err) {
      console.warn("synth-nb: could not save the notebook once its kernel shut down", err);
    } finally {
      saving.delete(context);
    }
  });
}

/**
 * Call `gone` once the kernel behind this view is gone, then `freeze` (`FREEZE`, if given) its
 * output. Where ipywidgets' manager tells the kernel's status (JupyterLab, Notebook 7) that
 * says it; elsewhere the view learns it the way ipywidgets tells it: every view's element is marked
 * disconnected (inside a box only the box's element may be, so the element and its ancestors up to the
 * output are watched), and an anywidget model goes offline (`comm_live_update`). A view drawn for a model
 * that is already disconnected is gone at once. Returns a function that stops watching.
 */
export function whenKernelGone(el, gone, model, freeze) {
  let fired = false;
  let pending = 0;
  const fire = (soon, status) => {
    if (fired) return;
    fired = true;
    gone();
    if (freeze) freeze.copy(el, model, soon, status);
  };
  const source = statusSourceOf(model && model.widget_manager);
  const unlisten = source ? onGoneStatus(source, (status) => fire(true, status)) : () => {};
  const marked = () => Boolean(el.closest(`.${DISCONNECTED}`));
  // without a status to listen to, the disconnected mark is the only word; with one, the status is
  const observer = new MutationObserver(() => { if (!source && marked()) fire(false); });
  const watch = () => {
    if (!el.isConnected) { pending = requestAnimationFrame(watch); return; }
    let area = null;
    for (let n = el; n && n !== document.body; n = n.parentElement) {
      observer.observe(n, { attributes: true, attributeFilter: ["class"] });
      if (n.classList.contains(OUTPUT)) { area = n; break; }
    }
    if (marked()) fire(false);
    else if (freeze && area) freeze.prepare(area, model); // a shutdown's copy must be in place before the save
  };
  const offline = () => { if (!source) fire(false); };
  if (model) model.on("comm_live_update", offline);
  watch();
  return () => {
    cancelAnimationFrame(pending);
    observer.disconnect();
    unlisten();
    if (model) model.off("comm_live_update", offline);
  };
}
