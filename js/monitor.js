// Widgets of the monitor panel's control row (anywidget AFM) that ipywidgets lacks: a push button and a
// toggle button whose keys stay in the widget (on an ipywidgets button JupyterLab's command-mode shortcuts
// fire), the toggle reporting its state (`aria-pressed`), and the panel's one live region, a node that stays in place
// while its text changes, so screen readers announce each change (a re-rendered HTML output would
// replace its node every refresh and may never be read).

import { whenKernelGone } from "./kernel_gone.js";

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
  const release = keepKeys(el, button);
  const unfocus = focusOnRequest(model, button);
  const unwatch = whenKernelGone(el, () => { dead = true; redraw(); });
  el.append(button);
  redraw();
  for (const name of traits) model.on(`change:${name}`, redraw);
  return () => {
    for (const name of traits) model.off(`change:${name}`, redraw);
    button.removeEventListener("click", click);
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
    button.disabled = model.get("disabled");
  }, () => { if (!model.get("disabled")) model.send({ event: "click" }); });
  return () => { unname(); unmount(); };
}

/** The job's status line in the same output area no longer claims a live status and an ETA. */
function markStatusStale(el, jobId) {
  const area = el.closest(".jp-OutputArea") || document;
  for (const monitor of area.querySelectorAll(".synth-monitor")) {
    if (monitor.getAttribute("data-job-id") !== jobId) continue;
    for (const eta of monitor.querySelectorAll(".synth-eta")) eta.remove();
    const status = monitor.querySelector(".synth-status");
    if (status) status.textContent = `unknown (last seen ${status.textContent.trim()})`;
  }
}

/**
 * Once the row is over (`release_when_unfocused`), tell the kernel as soon as none of its controls holds the
 * keyboard focus, so it is replaced by static text without dropping a focus to the page. A focus lost to
 * another window does not count: the row waits until the page has the focus elsewhere.
 */
function releaseWhenUnfocused(model, el) {
  let row = null;
  let sent = false;
  const check = () => {
    if (sent || !model.get("release_when_unfocused")) return;
    row = row || el.closest(".synth-controls") || el;
    if (!row.isConnected || row.contains(document.activeElement) || !document.hasFocus()) return;
    sent = true;
    model.send({ event: "unfocused" });
  };
  const later = () => setTimeout(check, 0); // focusout fires before the focus lands on the next element
  let attached = false;
  const attach = () => {
    if (attached) { check(); return; }
    attached = true;
    row = el.closest(".synth-controls") || el;
    row.addEventListener("focusout", later);
    window.addEventListener("focus", later);
    check();
  };
  let pending = 0;
  const whenAttached = () => { if (el.isConnected) attach(); else pending = requestAnimationFrame(whenAttached); };
  const onChange = () => whenAttached();
  model.on("change:release_when_unfocused", onChange);
  if (model.get("release_when_unfocused")) whenAttached();
  return () => {
    cancelAnimationFrame(pending);
    model.off("change:release_when_unfocused", onChange);
    if (row) row.removeEventListener("focusout", later);
    window.removeEventListener("focus", later);
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
  // a job still running when its kernel went: say so in words (empty once the job has ended)
  const unwatch = whenKernelGone(el, () => {
    const notice = model.get("kernel_gone_notice");
    if (!notice) return;
    model.off("change:value", sync);
    node.classList.add("synth-gone");
    node.textContent = notice;
    markStatusStale(el, model.get("job_id"));
  });
  const unrelease = releaseWhenUnfocused(model, el);
  return () => {
    model.off("change:value", sync);
    unwatch();
    unrelease();
  };
}

export default {
  render(context) {
    const kind = context.model.get("kind");
    if (kind === "live_region") return renderLiveRegion(context);
    return kind === "button" ? renderButton(context) : renderToggle(context);
  },
};
