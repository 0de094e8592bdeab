// Both widgets' views learn that their kernel is gone, say so, and then leave a static copy of themselves
// in the notebook instead of a widget output, so a notebook saved after a kernel restart or crash reopens
// with what the view last showed rather than "Error displaying widget: model not found".
//
// A kernel *shutdown* needs none of this: the kernel itself replaces its live outputs before it stops
// (synth_nb/notebook/live_output.py). On a restart JupyterLab drops what the old kernel sends, and after a
// crash there is no kernel to send anything, so the front end does it here.

const DISCONNECTED = "jupyter-widgets-disconnected";
const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const OUTPUT = "jp-OutputArea-output";
/** Set on an output whose static copy is on its way (all views inside it share one copy). */
const FROZEN = "data-synth-frozen";

/**
 * Kernel statuses that end the kernel holding the widgets' models: a restart (JupyterLab says "restarting"
 * first, also before an automatic restart after a crash) or a death. A websocket that drops and comes back
 * to the same kernel goes through "unknown" and keeps the models: that is not a gone kernel.
 */
export const GONE_STATUSES = new Set(["restarting", "autorestarting", "dead"]);

/** The kernel connection of ipywidgets' manager (JupyterLab and Notebook 7), or null elsewhere. */
export function kernelOf(manager) {
  try {
    const kernel = manager ? manager.kernel : null;
    return kernel && kernel.statusChanged && typeof kernel.statusChanged.connect === "function" ? kernel : null;
  } catch {
    return null; // a disposed manager
  }
}

/** Call `gone` once `kernel` reports a gone status; returns a function that stops listening. */
export function onGoneStatus(kernel, gone) {
  const listener = (_, status) => { if (GONE_STATUSES.has(status)) gone(); };
  kernel.statusChanged.connect(listener);
  return () => kernel.statusChanged.disconnect(listener);
}

/**
 * Put `bundle` in place of every output of `notebook` (a JupyterLab notebook model) that shows one of the
 * widget models `ids`, through the cells' output models (as an `update_display_data` would): the output
 * area draws it and the notebook saves it. Returns how many outputs were replaced.
 */
export function replaceWidgetOutputs(notebook, ids, bundle) {
  let replaced = 0;
  const cells = notebook.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    const outputs = cell.type === "code" ? cell.outputs : null;
    if (!outputs) continue;
    for (let j = 0; j < outputs.length; j++) {
      const output = outputs.get(j);
      if (output.type !== "display_data" && output.type !== "execute_result") continue;
      const view = output.data[WIDGET_VIEW];
      if (!view || !ids.has(view.model_id)) continue;
      const value = { output_type: output.type, data: { ...bundle }, metadata: {} };
      if (output.type === "execute_result") value.execution_count = output.executionCount;
      outputs.set(j, value);
      replaced += 1;
    }
  }
  return replaced;
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

/**
 * What the output shows now, as static HTML that does nothing: controls disabled, out of the Tab order,
 * the values typed into text fields kept (never a password field's), plus its text for plain renderers.
 */
export function staticCopy(area, css = "") {
  const copy = area.cloneNode(true);
  const live = area.querySelectorAll("input, select, textarea");
  const copied = copy.querySelectorAll("input, select, textarea");
  live.forEach((field, k) => {
    const target = copied[k];
    if (field.type === "password") target.removeAttribute("value");
    else if (field.type === "checkbox" || field.type === "radio") target.toggleAttribute("checked", field.checked);
    else if (field.tagName === "TEXTAREA") target.textContent = field.value;
    else if (field.tagName === "INPUT") target.setAttribute("value", field.value);
  });
  for (const control of copy.querySelectorAll("button, input, select, textarea")) control.setAttribute("disabled", "");
  for (const node of copy.querySelectorAll("[tabindex], [contenteditable]")) {
    node.setAttribute("tabindex", "-1");
    node.removeAttribute("contenteditable");
  }
  for (const node of copy.querySelectorAll("[aria-live]")) node.setAttribute("aria-live", "off"); // no longer news
  const html = `<div class="synth-frozen">${scopedStyle(css)}${copy.innerHTML}</div>`;
  const text = (area.innerText || area.textContent || "").replace(/\n{3,}/g, "\n\n").trim();
  return { "text/html": html, "text/plain": text };
}

/** Once every view in the output has drawn its "gone" state: put the static copy in the output's place. */
function freezeOutput(el, model) {
  const manager = model && model.widget_manager;
  let notebook = null;
  try {
    notebook = manager && manager.context && manager.context.model;
  } catch {
    notebook = null;
  }
  const area = el.closest(`.${OUTPUT}`);
  if (!notebook || !notebook.cells || !area || area.hasAttribute(FROZEN)) return;
  area.setAttribute(FROZEN, "");
  setTimeout(async () => {
    try {
      if (!area.isConnected) return;
      const ids = await idsShownIn(area, manager, notebook);
      if (ids.size) replaceWidgetOutputs(notebook, ids, staticCopy(area, model.get("_css")));
    } catch (err) {
      // the live view still says the kernel is gone; only the saved notebook keeps the widget reference
      console.warn("synth-nb: could not replace a widget whose kernel is gone by a static copy", err);
    }
  }, 0);
}

/**
 * Call `gone` once the kernel behind this view is gone, then replace the view's output by a static copy
 * of what it shows. Where ipywidgets' manager has a kernel connection (JupyterLab, Notebook 7) its status
 * says it; elsewhere the view learns it the way ipywidgets tells it: every view's element is marked
 * disconnected (inside a box only the box's element may be, so the element and its ancestors up to the
 * output are watched), and an anywidget model goes offline (`comm_live_update`). A view drawn for a model
 * that is already disconnected is gone at once. Returns a function that stops watching.
 */
export function whenKernelGone(el, gone, model) {
  let fired = false;
  let pending = 0;
  const fire = () => {
    if (fired) return;
    fired = true;
    gone();
    freezeOutput(el, model);
  };
  const kernel = kernelOf(model && model.widget_manager);
  const unlisten = kernel ? onGoneStatus(kernel, fire) : () => {};
  const marked = () => Boolean(el.closest(`.${DISCONNECTED}`));
  // without a kernel to listen to, the disconnected mark is the only word; with one, the status is
  const observer = new MutationObserver(() => { if (!kernel && marked()) fire(); });
  const watch = () => {
    if (!el.isConnected) { pending = requestAnimationFrame(watch); return; }
    for (let n = el; n && n !== document.body; n = n.parentElement) {
      observer.observe(n, { attributes: true, attributeFilter: ["class"] });
      if (n.classList.contains(OUTPUT)) break;
    }
    if (marked()) fire();
  };
  const offline = () => { if (!kernel) fire(); };
  if (model) model.on("comm_live_update", offline);
  watch();
  return () => {
    cancelAnimationFrame(pending);
    observer.disconnect();
    unlisten();
    if (model) model.off("comm_live_update", offline);
  };
}
