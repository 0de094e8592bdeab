// The %synth_train wizard view (anywidget AFM). The kernel owns all state and validation; this file
// only draws the synced traits (wizard_view.js) and reports user actions. Secrets: the view only ever
// receives masked values; a pasted key leaves through model.send and the password field is emptied at once.
//
// Redraws morph the existing DOM (morphdom) instead of replacing it, so the focused control, open
// <details>, typed text and alert nodes survive them; a control that did go away hands focus back by
// its stable `data-key` (or to the control that took its place, `data-focus-from`). Actions are read from
// `data-action` by delegation on the root, so no listener holds stale state. Single keys pressed inside stay
// inside (JupyterLab's command-mode shortcuts `a`, `d d`, arrows would otherwise edit the notebook); Ctrl/Cmd
// combinations reach the notebook and Escape goes back to the cell (keys.js).
import morphdom from "morphdom";

import {
  canSubmit,
  envFileAnnouncement,
  moveStep,
  preflightAnnouncement,
  rescanAnnouncement,
  secretAnnouncement,
  selectPath,
  stepAnnouncement,
  stepOfAction,
  submitBlockers,
  submittedSummary,
} from "./wizard_logic.js";
import { handFocusOnRemoval } from "./focus_handoff.js";
import { FREEZE, maskedValue, whenKernelGone } from "./kernel_gone.js";
import { SUPPRESS, routeKey } from "./keys.js";
import { h, viewOf } from "./wizard_view.js";

const TRAITS = [
  "step", "configs", "selected", "env_files_available", "env_file", "use_modal", "modal_secret", "secrets",
  "backend", "backend_url", "backend_embedded", "override_fields", "overrides", "override_errors", "previews",
  "blockers", "can_submit", "submitting", "submitted", "submitted_to", "duplicate", "submit_error",
  "forked_from", "preflight", "preflight_running", "preflight_error",
];
/** How long a pasted key may wait for the kernel's receipt before the row says it was not confirmed. */
const PASTE_CONFIRM_MS = 5000;

let viewCounter = 0;

function state(model) {
  const out = {};
  for (const name of TRAITS) out[name] = model.get(name);
  return out;
}

function set(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

/** Morph options: what the user has typed, and which <details> they closed or opened, are theirs to keep. */
function keepUserState(from, to) {
  if (from.tagName === "INPUT" && (from.type === "password" || (from.type === "text" && from === document.activeElement))) {
    to.value = from.value; // a pasted key lives only in its field until Use; typed text until it is committed
  }
  if (from.tagName === "DETAILS") to.open = from.open;
  return true;
}

/** The control that should hold focus after `key` went away: itself, one that took its place, or the body. */
function focusTarget(content, key) {
  if (!key) return content.querySelector(".synth-body");
  const esc = CSS.escape(key);
  return content.querySelector(`[data-key="${esc}"]`) || content.querySelector(`[data-focus-from~="${esc}"]`)
    || content.querySelector(".synth-body");
}

/** A redraw that keeps focus: on the same node when it survives the morph, else on its `data-key`. */
function redrawer(model, content, uid, local) {
  const draw = () => {
    const active = document.activeElement;
    const hadFocus = content.contains(active);
    const key = hadFocus ? active.getAttribute("data-key") : null;
    morphdom(content, viewOf(state(model), uid, local), { onBeforeElUpdated: keepUserState });
    if (local.focus) {
      const wanted = content.querySelector(`[data-key="${CSS.escape(local.focus)}"]`);
      local.focus = null;
      if (wanted) { wanted.focus(); return; }
    }
    if (!hadFocus || content.contains(document.activeElement)) return;
    focusTarget(content, key).focus();
  };
  let scheduled = false;
  const redraw = () => {
    if (scheduled) return;
    scheduled = true;
    // after the current task: a Tab that committed a field has moved focus by then, and the kernel's
    // burst of trait changes becomes one redraw
    setTimeout(() => { scheduled = false; draw(); }, 0);
  };
  return { draw, redraw };
}

/** A pasted key goes to the kernel once; its row says "sending…" until the kernel's receipt arrives. */
function sendSecret(model, local, announce, redraw, name, value) {
  clearTimeout(local.timers[name]);
  local.pastes[name] = "sending";
  local.secret = name;
  try {
    model.send({ type: "paste_secret", name, value });
  } catch (err) { // the widget lost its kernel connection: the key went nowhere
    local.pastes[name] = "failed";
    announce(`${name} did not reach the kernel.`);
    redraw();
    return;
  }
  local.timers[name] = setTimeout(() => {
    if (local.pastes[name] !== "sending") return;
    local.pastes[name] = "unconfirmed";
    announce(`The kernel has not confirmed ${name} yet.`);
    redraw();
  }, PASTE_CONFIRM_MS);
  redraw();
}

/** What each `data-action` does; `local` remembers which kernel answer is news for the live region. */
function actionsFor(model, content, announce, local, redraw) {
  const useSecret = (name) => {
    const field = content.querySelector(`input[data-action="paste"][data-name="${CSS.escape(name)}"]`);
    const value = field ? field.value : "";
    if (field) field.value = ""; // cleared as soon as it is read: the key never stays in the page
    if (!value) { announce(`Paste a value for ${name} first.`); return; }
    sendSecret(model, local, announce, redraw, name, value);
  };
  const confirmAgain = (open, focus) => { local.confirmAgain = open; local.focus = focus; redraw(); };
  /** A committed value that holds a credential (URL userinfo, a key-shaped token) goes to the kernel in a
   * message of its own, before the trait, which gets (and the field shows) its masked form only. */
  const keep = (t, field, value) => {
    const shown = maskedValue(value);
    if (shown === value) return value;
    model.send({ type: "keep", field, value });
    t.value = shown;
    return shown;
  };
  /** Leaving a step checks it: its problems are flagged from now on and said as the next step opens. */
  const go = (step) => {
    const from = model.get("step");
    local.checked.add(from);
    if (step === from) { redraw(); return; }
    local.left = from;
    set(model, "step", step);
  };
  return {
    step: (t) => go(t.dataset.step),
    back: () => go(moveStep(model.get("step"), -1)),
    next: () => go(moveStep(model.get("step"), 1)),
    config: (t) => set(model, "selected", selectPath(model.get("selected"), t.dataset.path, t.checked,
      model.get("configs").map((c) => c.path))),
    rescan: () => { local.rescan = true; model.send({ type: "refresh" }); },
    preflight: () => { announce("Running the pre-flight check (no job is sent)…"); model.send({ type: "preflight" }); },
    use: (t) => useSecret(t.dataset.name),
    paste: (t) => useSecret(t.dataset.name),
    "env-file": (t) => { set(model, "env_file", t.value); announce(envFileAnnouncement(t.value)); },
    "use-modal": (t) => set(model, "use_modal", t.checked),
    "modal-secret": (t) => set(model, "modal_secret", t.value.trim()),
    backend: (t) => set(model, "backend", keep(t, "backend", t.value.trim())),
    override: (t) => set(model, "overrides", { ...model.get("overrides"),
      [t.dataset.name]: t.type === "checkbox" ? t.checked : keep(t, `override:${t.dataset.name}`, t.value) }),
    submit: () => {
      const s = state(model);
      if (canSubmit(s)) model.send({ type: "submit" });
      else announce(`Cannot submit yet: ${submitBlockers(s).join(" ")}`);
    },
    fold: (t) => {
      if (!local.unfolded.delete(t.dataset.fold)) local.unfolded.add(t.dataset.fold);
      redraw();
    },
    again: () => confirmAgain(!local.confirmAgain, local.confirmAgain ? null : "again-yes"),
    "again-no": () => confirmAgain(false, "again"),
    "again-yes": () => {
      local.confirmAgain = false;
      model.send({ type: "submit", duplicate: true });
      redraw();
    },
  };
}

/** Delegated listeners on the root; returns a function that removes them. `touch(control)` is told of
 * every control the user changes or presses before its action runs. */
function listen(root, content, actions, touch) {
  const actionOf = (target) => {
    const t = target instanceof Element ? target.closest("[data-action]") : null;
    return t && content.contains(t) ? t : null;
  };
  const handlers = {
    click: (e) => {
      const t = actionOf(e.target);
      if (!t || t.tagName !== "BUTTON") return;
      if (t.getAttribute("aria-disabled") === "true" && t.dataset.action !== "submit") return;
      touch(t);
      actions[t.dataset.action](t);
    },
    change: (e) => {
      const t = actionOf(e.target);
      if (!t || t.tagName === "BUTTON" || t.dataset.action === "paste") return;
      touch(t);
      actions[t.dataset.action](t);
    },
    keydown: (e) => {
      if (routeKey(e, root) !== "own") return;
      const t = actionOf(e.target);
      if (e.key !== "Enter" || !t || t.tagName !== "INPUT" || !["text", "password"].includes(t.type)) return;
      e.preventDefault(); // Enter commits a text field like leaving it does
      touch(t);
      actions[t.dataset.action](t);
    },
  };
  for (const [type, fn] of Object.entries(handlers)) root.addEventListener(type, fn);
  return () => { for (const [type, fn] of Object.entries(handlers)) root.removeEventListener(type, fn); };
}

/** Model events: every trait redraws; some changes and kernel answers are also news to announce. */
function follow(model, redraw, announce, local) {
  const handlers = {
    "change:step": () => {
      announce(stepAnnouncement(state(model), local.left));
      local.left = null;
    },
    "change:submitting": () => { if (model.get("submitting")) announce("Submitting…"); },
    "change:preflight_running": () => {
      if (!model.get("preflight_running")) announce(preflightAnnouncement(model.get("preflight"), model.get("preflight_error")));
    },
    "change:submitted": () => {
      if (model.get("submitted").length) announce(submittedSummary(model.get("submitted")));
    },
    "msg:custom": (msg) => {
      if (msg && msg.type === "secret_received") {
        clearTimeout(local.timers[msg.name]);
        delete local.pastes[msg.name];
        if (msg.name === local.secret) {
          local.secret = null;
          announce(secretAnnouncement(model.get("secrets"), msg.name));
        }
      } else if (msg && msg.type === "rescanned" && local.rescan) {
        local.rescan = false;
        announce(rescanAnnouncement(model.get("configs")));
      }
      redraw();
    },
  };
  for (const name of TRAITS) model.on(`change:${name}`, redraw);
  for (const [event, fn] of Object.entries(handlers)) model.on(event, fn);
  return () => {
    for (const name of TRAITS) model.off(`change:${name}`, redraw);
    for (const [event, fn] of Object.entries(handlers)) model.off(event, fn);
  };
}

function render({ model, el }) {
  const uid = `synth-wiz-${++viewCounter}`;
  const content = h("div", { class: "synth-content" });
  const live = h("div", { class: "synth-live", role: "status", "aria-live": "polite", "aria-atomic": "true",
    "data-testid": "wizard-live" });
  const root = h("section", { class: "synth-wizard", "aria-label": "Synth training wizard",
    [SUPPRESS]: "true" }, content, live);
  el.append(root);
  /** The one live region: its text changes, the node stays, so screen readers keep listening to it. */
  const announce = (text) => {
    live.textContent = live.textContent === text ? `${text}\u00a0` : text; // repeated news is still news
  };
  /** What only this view knows: keys on their way to the kernel, the "submit again" confirmation, unfolded
   * lists of the preview, where focus should go after the next redraw, and the steps checked so far. */
  const local = { pastes: {}, timers: {}, secret: null, rescan: false, confirmAgain: false, focus: null,
    unfolded: new Set(), checked: new Set(), left: null };
  const { draw, redraw } = redrawer(model, content, uid, local);
  /** A control changed on a step: that step's problems are flagged from now on. */
  const touch = (t) => {
    const step = stepOfAction(t.dataset.action);
    if (step && !local.checked.has(step)) {
      local.checked.add(step);
      redraw();
    }
  };
  const unlisten = listen(root, content, actionsFor(model, content, announce, local, redraw), touch);
  const unfollow = follow(model, redraw, announce, local);
  // no kernel, no wizard: say so in words, and its controls leave the Tab order (inert)
  const unwatch = whenKernelGone(el, () => {
    content.inert = true;
    root.insertBefore(h("p", { class: "synth-error synth-gone", "data-testid": "wizard-kernel-gone" },
      "The kernel that ran this wizard is gone: it can no longer check or send anything. Jobs it sent keep "
      + "running; run the cell again in a new kernel (or %synth_train --attach JOB_ID)."), content);
  }, model, FREEZE);
  // once it submitted the wizard is replaced by what it sent: a focus it held goes to the new job's panel row
  const handOver = handFocusOnRemoval(el, () => model.get("submitted").length > 0);
  draw();
  return () => {
    unlisten();
    unfollow();
    unwatch();
    handOver();
    for (const timer of Object.values(local.timers)) clearTimeout(timer);
  };
}

export default { render };
