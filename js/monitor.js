// Widgets of the monitor panel's control row (anywidget AFM) that ipywidgets lacks: a push button and a
// toggle button whose keys stay in the widget (on an ipywidgets button JupyterLab's command-mode shortcuts
// fire), the toggle reporting its state (`aria-pressed`). The row's live region has a script of its own
// (live_region.js).

import { whenKernelGone } from "./kernel_gone.js";
import { SUPPRESS, routeKey } from "./keys.js";

const TOGGLE_TRAITS = ["value", "description", "tooltip"];
const BUTTON_TRAITS = ["description", "tooltip", "disabled", "button_style", "css_class"];

/**
 * Single keys pressed here stay here (JupyterLab's command-mode shortcuts would otherwise edit the notebook);
 * Ctrl/Cmd combinations reach the notebook, Escape goes back to the cell (keys.js). The focused element itself
 * must carry the attribute (Lumino tests it against a shortcut's selector before looking at its ancestors); the
 * bubbling listener covers front ends that listen late.
 */
function keepKeys(el, control) {
  control.setAttribute(SUPPRESS, "true");
  const route = (e) => routeKey(e, el);
  el.addEventListener("keydown", route);
  return () => el.removeEventListener("keydown", route);
}

/** Python's `focus()` sends {do: "focus"}; the view's own handler would focus the (unfocusable) div. */
function focusOnRequest(model, control) {
  const onMessage = (msg) => { if (msg && msg.do === "focus") control.focus(); };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

/** A `<button>` in `el` that keeps its keys, redrawn by `sync` when one of `traits` changes; once the kernel
 * is gone it is disabled for good (not focusable, Enter and clicks do nothing), not just dimmed. */
function mountButton({ model, el }, traits, sync, onClick) {
  const button = document.createElement("button");
  button.type = "button";
  let dead = false;
  const redraw = () => {
    sync(button);
    if (dead) button.disabled = true;
  };
  const click = (e) => { if (!dead) onClick(e); };
  button.addEventListener("click", click);
  button.addEventListener("blur", redraw); // a button turned off while focused leaves the Tab order now
  const release = keepKeys(el, button);
  const unfocus = focusOnRequest(model, button);
  const unwatch = whenKernelGone(el, () => { dead = true; redraw(); }, model);
  el.append(button);
  redraw();
  for (const name of traits) model.on(`change:${name}`, redraw);
  return () => {
    for (const name of traits) model.off(`change:${name}`, redraw);
    button.removeEventListener("click", click);
    button.removeEventListener("blur", redraw);
    release();
    unfocus();
    unwatch();
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

/**
 * ipywidgets' boxes take no ARIA attributes: a button with a `group_label` names the box it sits in as a
 * group (Cancel's "Yes / Keep running" question), once the box has attached it.
 */
function nameGroup(model, el) {
  const label = model.get("group_label");
  if (!label) return () => {};
  let frames = 0;
  let pending = 0;
  const tryName = () => {
    const box = el.parentElement && el.parentElement.closest(".widget-box");
    if (box) {
      box.setAttribute("role", "group");
      box.setAttribute("aria-label", label);
    } else if (++frames < 600) {
      pending = requestAnimationFrame(tryName);
    }
  };
  tryName();
  return () => cancelAnimationFrame(pending);
}

function renderButton(context) {
  const { model, el } = context;
  const unname = nameGroup(model, el);
  const unmount = mountButton(context, BUTTON_TRAITS, (button) => {
    const style = model.get("button_style");
    // ipywidgets' own button classes: the same look as the neighbouring widgets, in every theme
    button.className = ["jupyter-widgets", "jupyter-button", "widget-button", style ? `mod-${style}` : "",
      model.get("css_class")].filter(Boolean).join(" ");
    button.textContent = model.get("description");
    button.title = model.get("tooltip");
    // turned off while it has the focus (Cancel when the job ends): disabling it would drop the focus to the
    // page, so it says it is unavailable (aria-disabled) until the focus leaves it
    const off = model.get("disabled");
    const keep = off && document.activeElement === button;
    button.disabled = off && !keep;
    if (keep) button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
  }, () => { if (!model.get("disabled")) model.send({ event: "click" }); });
  return () => { unname(); unmount(); };
}

export default {
  render(context) {
    return context.model.get("kind") === "button" ? renderButton(context) : renderToggle(context);
  },
};
