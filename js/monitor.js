// Widgets of the monitor panel's control row (anywidget AFM) that ipywidgets lacks: a push button and a
// toggle button whose keys stay in the widget (on an ipywidgets button JupyterLab's command-mode shortcuts
// fire), the toggle reporting its state (`aria-pressed`), and the panel's one live region, a node that stays in place
// while its text changes, so screen readers announce each change (a re-rendered HTML output would
// replace its node every refresh and may never be read).

const TOGGLE_TRAITS = ["value", "description", "tooltip"];
const BUTTON_TRAITS = ["description", "tooltip", "disabled", "button_style", "css_class"];

/**
 * Keys pressed here stay here: JupyterLab's command-mode shortcuts would otherwise edit the notebook.
 * The focused element itself must carry the attribute (Lumino tests it against a shortcut's selector
 * before looking at its ancestors); the bubbling listener covers front ends that listen late.
 */
function keepKeys(el, control) {
  control.setAttribute("data-lm-suppress-shortcuts", "true");
  const stop = (e) => e.stopPropagation();
  el.addEventListener("keydown", stop);
  return () => el.removeEventListener("keydown", stop);
}

/** Python's `focus()` sends {do: "focus"}; the view's own handler would focus the (unfocusable) div. */
function focusOnRequest(model, control) {
  const onMessage = (msg) => { if (msg && msg.do === "focus") control.focus(); };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

/** A `<button>` in `el` that keeps its keys, redrawn by `sync` when one of `traits` changes. */
function mountButton({ model, el }, traits, sync, onClick) {
  const button = document.createElement("button");
  button.type = "button";
  const redraw = () => sync(button);
  button.addEventListener("click", onClick);
  const release = keepKeys(el, button);
  const unfocus = focusOnRequest(model, button);
  el.append(button);
  redraw();
  for (const name of traits) model.on(`change:${name}`, redraw);
  return () => {
    for (const name of traits) model.off(`change:${name}`, redraw);
    button.removeEventListener("click", onClick);
    release();
    unfocus();
  };
}

function renderToggle(context) {
  const { model } = context;
  return mountButton(context, TOGGLE_TRAITS, (button) => {
    button.className = "synth-toggle";
    button.textContent = model.get("description");
    button.title = model.get("tooltip");
    button.setAttribute("aria-pressed", model.get("value") ? "true" : "false");
  }, () => {
    model.set("value", !model.get("value"));
    model.save_changes();
  });
}

function renderButton(context) {
  const { model } = context;
  return mountButton(context, BUTTON_TRAITS, (button) => {
    const style = model.get("button_style");
    // ipywidgets' own button classes: the same look as the neighbouring widgets, in every theme
    button.className = ["jupyter-widgets", "jupyter-button", "widget-button", style ? `mod-${style}` : "",
      model.get("css_class")].filter(Boolean).join(" ");
    button.textContent = model.get("description");
    button.title = model.get("tooltip");
    button.disabled = model.get("disabled");
  }, () => { if (!model.get("disabled")) model.send({ event: "click" }); });
}

function renderLiveRegion({ model, el }) {
  const node = document.createElement("div");
  node.className = "synth-live-region";
  node.setAttribute("role", "status");
  node.setAttribute("aria-live", "polite");
  node.setAttribute("aria-atomic", "true");
  const sync = () => { node.textContent = model.get("value"); };
  el.append(node);
  sync();
  model.on("change:value", sync);
  return () => model.off("change:value", sync);
}

export default {
  render(context) {
    const kind = context.model.get("kind");
    if (kind === "live_region") return renderLiveRegion(context);
    return kind === "button" ? renderButton(context) : renderToggle(context);
  },
};
