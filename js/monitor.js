// Two widgets of the monitor panel's control row (anywidget AFM) that ipywidgets lacks: a toggle button
// that reports its state (`aria-pressed`), and the panel's one live region, a node that stays in place
// while its text changes, so screen readers announce each change (a re-rendered HTML output would
// replace its node every refresh and may never be read).

const EVENTS = ["value", "description", "tooltip"];

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

function renderToggle({ model, el }) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "synth-toggle";
  const sync = () => {
    button.textContent = model.get("description");
    button.title = model.get("tooltip");
    button.setAttribute("aria-pressed", model.get("value") ? "true" : "false");
  };
  const flip = () => {
    model.set("value", !model.get("value"));
    model.save_changes();
  };
  button.addEventListener("click", flip);
  const release = keepKeys(el, button);
  el.append(button);
  sync();
  for (const name of EVENTS) model.on(`change:${name}`, sync);
  return () => {
    for (const name of EVENTS) model.off(`change:${name}`, sync);
    button.removeEventListener("click", flip);
    release();
  };
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
    return context.model.get("kind") === "live_region" ? renderLiveRegion(context) : renderToggle(context);
  },
};
