// The %synth_train wizard view (anywidget AFM). The kernel owns all state and validation; this file
// only draws the synced traits and reports user actions. Secrets: the view only ever receives masked
// values; a pasted key leaves through model.send and the password field is emptied at once.
//
// Redraws morph the existing DOM (morphdom) instead of replacing it, so the focused control, open
// <details>, typed text and alert nodes survive them; a control that did go away hands focus back by
// its stable `data-key`. Actions are read from `data-action` by delegation on the root, so no listener
// holds stale state. Keys pressed inside stay inside: JupyterLab's command-mode shortcuts (`a`, `d d`,
// arrows) would otherwise edit the notebook (see KEYED).
import morphdom from "morphdom";

import {
  STEPS,
  canSubmit,
  configBadge,
  diffLineKind,
  domKey,
  fieldError,
  flowLabel,
  moveStep,
  problemLabel,
  rescanAnnouncement,
  secretAnnouncement,
  secretStatus,
  selectPath,
  stepAnnouncement,
  stepIndex,
  stepProblems,
  submitBlockers,
  submittedSummary,
} from "./wizard_logic.js";

const TRAITS = [
  "step", "configs", "selected", "env_files_available", "env_file", "use_modal", "modal_secret", "secrets",
  "backend", "override_fields", "overrides", "override_errors", "previews", "blockers", "can_submit",
  "submitting", "submitted", "submit_error",
];
const BACKEND_HINT = "'local' for the embedded backend, a URL, or blank for the default (SYNTH_BACKEND_OVERRIDE or the hosted backend)";

let viewCounter = 0;

/** Controls that take keys. Each carries `data-lm-suppress-shortcuts` itself: Lumino stops looking for a
 * shortcut at the first element that has it, but tests the focused element against the shortcut's
 * selector before its ancestors, and Notebook 7 listens in the capture phase (before any handler of ours). */
const KEYED = new Set(["BUTTON", "INPUT", "SELECT", "SUMMARY", "PRE"]);

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  if (KEYED.has(el.tagName)) el.setAttribute("data-lm-suppress-shortcuts", "true");
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "checked" || key === "value" || key === "open") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

function state(model) {
  const out = {};
  for (const name of TRAITS) out[name] = model.get(name);
  return out;
}

function set(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

/** Build the view for one state; `uid` keeps ids unique when the same widget is shown twice. */
function viewOf(s, uid) {
  const id = (key) => `${uid}-${domKey(key)}`;
  const keyed = (key) => ({ id: id(key), "data-key": key });
  const current = stepIndex(s.step);
  const steps = h("ol", { class: "synth-steps", "aria-label": "Wizard steps" }, STEPS.map((step, i) => {
    const problems = stepProblems(s, step.id);
    const label = `${i + 1}. ${step.label}`;
    return h("li", {}, h("button", { ...keyed(`step:${step.id}`), type: "button", class: "synth-step",
      "data-action": "step", "data-step": step.id, "aria-current": i === current ? "step" : undefined,
      "aria-label": problems.length ? `${label}, ${problemLabel(problems.length)}` : undefined,
      "data-testid": `step-${step.id}`, title: problems.join("\n") || undefined },
    label,
    problems.length ? h("span", { class: "synth-step-problems", "aria-hidden": "true", text: `⚠ ${problems.length}` }) : null));
  }));
  const body = {
    configs: () => configsStep(s, id, keyed),
    secrets: () => secretsStep(s, id, keyed),
    overrides: () => overridesStep(s, id, keyed),
    preview: () => previewStep(s, id, keyed),
    submit: () => submitStep(s, id, keyed),
  }[STEPS[current].id]();
  const edge = (delta) => moveStep(s.step, delta) === s.step;
  const footer = h("div", { class: "synth-footer" },
    h("button", { ...keyed("back"), type: "button", class: "synth-secondary", "data-action": "back",
      "aria-disabled": edge(-1) ? "true" : "false", text: "Back" }),
    h("button", { ...keyed("next"), type: "button", class: "synth-secondary", "data-action": "next",
      "aria-disabled": edge(1) ? "true" : "false", text: "Next" }));
  return h("div", { class: "synth-content" },
    h("h3", { class: "synth-title", text: "Launch a Synth training job" }), steps,
    h("div", { id: id(`body:${STEPS[current].id}`), class: "synth-body", role: "region", tabindex: "-1",
      "aria-label": `Step ${current + 1} of ${STEPS.length}: ${STEPS[current].label}` }, body),
    footer);
}

function configsStep(s, id, keyed) {
  const rows = s.configs.map((c) => {
    const key = `cfg:${c.path}`;
    const badge = configBadge(c);
    const described = [id(`${key}:badge`), c.valid ? null : id(`${key}:error`)].filter(Boolean).join(" ");
    return h("li", { class: "synth-config" },
      h("input", { ...keyed(key), type: "checkbox", "data-action": "config", "data-path": c.path,
        "data-testid": `config-${c.path}`, checked: s.selected.includes(c.path), "aria-describedby": described,
        "aria-invalid": c.valid ? undefined : "true" }),
      h("label", { for: id(key) }, h("span", { class: "synth-path", text: c.path }), " ",
        h("span", { class: "synth-flow", text: `(${flowLabel(c)})` })),
      h("span", { id: id(`${key}:badge`), class: `synth-badge synth-badge--${badge.kind}`,
        title: badge.title || undefined, text: badge.text }),
      c.valid ? null : h("div", { id: id(`${key}:error`), class: "synth-error", text: c.error }));
  });
  return h("fieldset", { class: "synth-fieldset" },
    h("legend", { text: "Training configs in this notebook's folder (pick one or more)" }),
    rows.length ? h("ul", { class: "synth-list" }, rows) : h("p", { text: "No training configs (.toml) found here." }),
    h("button", { ...keyed("rescan"), type: "button", class: "synth-secondary", "data-action": "rescan",
      text: "Rescan folder" }));
}

function secretsStep(s, id, keyed) {
  const rows = s.secrets.map((row) => {
    const status = secretStatus(row);
    return h("li", { class: "synth-secret" },
      h("span", { class: "synth-key", text: row.name }),
      h("span", { id: id(`status:${row.name}`), class: `synth-status synth-status--${status.kind}`,
        "data-testid": `secret-${row.name}`, text: status.text }),
      h("span", { class: "synth-paste" },
        h("input", { ...keyed(`paste:${row.name}`), type: "password", autocomplete: "off", spellcheck: "false",
          "data-action": "paste", "data-name": row.name, "aria-label": `Paste ${row.name}`,
          "aria-describedby": id(`status:${row.name}`), placeholder: row.found ? "replace (optional)" : "paste key" }),
        h("button", { ...keyed(`use:${row.name}`), type: "button", class: "synth-secondary", "data-action": "use",
          "data-name": row.name, "aria-label": `Use pasted ${row.name}`, text: "Use" })));
  });
  return h("div", {},
    h("p", { id: id("secrets-caption"), class: "synth-caption",
      text: "Required keys (values are masked; they never leave the kernel)" }),
    h("ul", { class: "synth-list synth-secrets", "aria-labelledby": id("secrets-caption") }, rows),
    h("div", { class: "synth-row" },
      h("label", { for: id("env-file"), text: ".env file" }),
      h("select", { ...keyed("env-file"), "data-action": "env-file", "aria-describedby": id("env-file:hint") },
        h("option", { value: "", text: "automatic", selected: !s.env_file }),
        s.env_files_available.map((f) => h("option", { value: f, text: f, selected: f === s.env_file }))),
      h("span", { id: id("env-file:hint"), class: "synth-hint", text: "automatic: the environment, then the nearest .env" })),
    h("div", { class: "synth-row" },
      h("input", { ...keyed("use-modal"), type: "checkbox", "data-action": "use-modal", checked: s.use_modal }),
      h("label", { for: id("use-modal"), text: "Also read a Modal secret" }),
      s.use_modal ? h("input", { ...keyed("modal-secret"), type: "text", "data-action": "modal-secret",
        "aria-label": "Modal secret name", value: s.modal_secret }) : null));
}

/** The message under a field: an alert node of its own when it is an error, so it is announced once. */
function fieldMessage(id, key, error, hint, testid) {
  const msgId = id(`${key}:${error ? "error" : "hint"}`);
  return [msgId, h("div", { id: msgId, class: error ? "synth-error" : "synth-hint", role: error ? "alert" : undefined,
    "data-testid": testid, text: error || hint })];
}

function overridesStep(s, id, keyed) {
  const backendError = s.override_errors.backend || "";
  const [backendMsg, backendNode] = fieldMessage(id, "backend", backendError, BACKEND_HINT, "override-backend-msg");
  const fields = s.override_fields.map((spec) => {
    const key = `ov:${spec.name}`;
    const value = (s.overrides || {})[spec.name];
    const error = fieldError(spec, value, s.override_errors);
    const [msgId, msgNode] = fieldMessage(id, key, error, spec.hint, `override-error-${spec.name}`);
    const common = { ...keyed(key), "data-action": "override", "data-name": spec.name, "aria-describedby": msgId,
      "aria-invalid": error ? "true" : "false", "data-testid": `override-${spec.name}` };
    const input = spec.type === "bool"
      ? h("input", { ...common, type: "checkbox", checked: value === true || value === "true" })
      : h("input", { ...common, type: "text", value: value === undefined || value === null ? "" : String(value),
          inputmode: spec.type === "int" ? "numeric" : undefined, placeholder: spec.prefill || spec.hint });
    return h("div", { class: `synth-field${error ? " synth-field--invalid" : ""}` },
      h("label", { for: id(key), text: spec.label }), input, msgNode);
  });
  return h("fieldset", { class: "synth-fieldset" },
    h("legend", { text: "Overrides (prefilled from the first selected config)" }),
    h("div", { class: `synth-field${backendError ? " synth-field--invalid" : ""}` },
      h("label", { for: id("backend"), text: "Backend" }),
      h("input", { ...keyed("backend"), type: "text", "data-action": "backend", value: s.backend,
        "data-testid": "override-backend", "aria-describedby": backendMsg,
        "aria-invalid": backendError ? "true" : "false" }),
      backendNode),
    fields);
}

function previewStep(s, id, keyed) {
  if (!s.previews.length) return h("p", { text: "Select a valid config to see what will be sent." });
  return h("div", {}, s.previews.map((p) => h("details", { id: id(`preview:${p.path}`), class: "synth-preview",
    open: true, "data-testid": `preview-${p.path}` },
  h("summary", { ...keyed(`preview-summary:${p.path}`), text: `${p.path} — ${flowLabel(p)}` }),
  p.error ? h("div", { id: id(`preview-error:${p.path}`), class: "synth-error", role: "alert", text: p.error }) : null,
  p.preview ? h("pre", { ...keyed(`payload:${p.path}`), class: "synth-json", tabindex: "0",
    "aria-label": `Payload for ${p.path}`, text: p.preview }) : null,
  p.has_last ? h("details", { id: id(`diff:${p.path}`), class: "synth-diff" },
    h("summary", { ...keyed(`diff-summary:${p.path}`),
      text: p.diff.length ? "Changes since the last submission from this notebook" : "Same as the last submission" }),
    p.diff.length ? h("pre", {}, p.diff.map((line) => h("span", { class: `synth-diff--${diffLineKind(line)}`, text: `${line}\n` }))) : null)
    : h("p", { class: "synth-hint", text: "No earlier submission from this notebook to compare with." }))));
}

function submitStep(s, id, keyed) {
  const blockers = submitBlockers(s);
  const ok = canSubmit(s);
  const why = blockers.length && !s.submitted.length;
  const label = s.submitting ? "Submitting…"
    : `Submit ${s.submitted.length ? "again" : s.selected.length > 1 ? `${s.selected.length} jobs` : "job"}`;
  return h("div", {},
    h("button", { ...keyed("submit"), type: "button", class: "synth-submit synth-primary", "data-action": "submit",
      "aria-disabled": ok ? "false" : "true", "aria-describedby": why ? id("why") : undefined, text: label }),
    why ? h("ul", { id: id("why"), class: "synth-blockers" }, blockers.map((b) => h("li", { text: b }))) : null,
    s.submit_error ? h("div", { id: id("submit-error"), class: "synth-error", role: "alert", "data-testid": "submit-error",
      text: s.submit_error }) : null,
    s.submitted.length ? h("div", { id: id("submitted"), class: "synth-done", "data-testid": "submitted" },
      h("p", { text: submittedSummary(s.submitted) }),
      h("ul", {}, s.submitted.map((j) => h("li", {}, h("code", { class: "synth-job-id", text: j.job_id }), ` ${j.flow} · ${j.path}`))),
      h("p", { class: "synth-hint", text: "The monitor panel for each job appears below." })) : null);
}

/** Morph options: what the user has typed, and which <details> they closed, are theirs to keep. */
function keepUserState(from, to) {
  if (from.tagName === "INPUT" && (from.type === "password" || (from.type === "text" && from === document.activeElement))) {
    to.value = from.value; // a pasted key lives only in its field until Use; typed text until it is committed
  }
  if (from.tagName === "DETAILS") to.open = from.open;
  return true;
}

/** A redraw that keeps focus: on the same node when it survives the morph, else on its `data-key`. */
function redrawer(model, content, uid) {
  const draw = () => {
    const active = document.activeElement;
    const hadFocus = content.contains(active);
    const key = hadFocus ? active.getAttribute("data-key") : null;
    morphdom(content, viewOf(state(model), uid), { onBeforeElUpdated: keepUserState });
    if (!hadFocus || content.contains(document.activeElement)) return;
    const again = key && content.querySelector(`[data-key="${CSS.escape(key)}"]`);
    (again || content.querySelector(".synth-body")).focus();
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

/** What each `data-action` does; `pending` remembers which kernel answer is news for the live region. */
function actionsFor(model, content, announce, pending) {
  const useSecret = (name) => {
    const field = content.querySelector(`input[data-action="paste"][data-name="${CSS.escape(name)}"]`);
    const value = field ? field.value : "";
    if (field) field.value = ""; // cleared as soon as it is read: the key never stays in the page
    if (!value) { announce(`Paste a value for ${name} first.`); return; }
    pending.secret = name;
    model.send({ type: "paste_secret", name, value });
  };
  return {
    step: (t) => set(model, "step", t.dataset.step),
    back: () => set(model, "step", moveStep(model.get("step"), -1)),
    next: () => set(model, "step", moveStep(model.get("step"), 1)),
    config: (t) => set(model, "selected", selectPath(model.get("selected"), t.dataset.path, t.checked,
      model.get("configs").map((c) => c.path))),
    rescan: () => { pending.rescan = true; model.send({ type: "refresh" }); },
    use: (t) => useSecret(t.dataset.name),
    paste: (t) => useSecret(t.dataset.name),
    "env-file": (t) => set(model, "env_file", t.value),
    "use-modal": (t) => set(model, "use_modal", t.checked),
    "modal-secret": (t) => set(model, "modal_secret", t.value.trim()),
    backend: (t) => set(model, "backend", t.value.trim()),
    override: (t) => set(model, "overrides", { ...model.get("overrides"),
      [t.dataset.name]: t.type === "checkbox" ? t.checked : t.value }),
    submit: () => {
      const s = state(model);
      if (canSubmit(s)) model.send({ type: "submit" });
      else announce(`Cannot submit yet: ${submitBlockers(s).join(" ")}`);
    },
  };
}

/** Delegated listeners on the root; returns a function that removes them. */
function listen(root, content, actions) {
  const actionOf = (target) => {
    const t = target instanceof Element ? target.closest("[data-action]") : null;
    return t && content.contains(t) ? t : null;
  };
  const handlers = {
    click: (e) => {
      const t = actionOf(e.target);
      if (!t || t.tagName !== "BUTTON") return;
      if (t.getAttribute("aria-disabled") === "true" && t.dataset.action !== "submit") return;
      actions[t.dataset.action](t);
    },
    change: (e) => {
      const t = actionOf(e.target);
      if (t && t.tagName !== "BUTTON" && t.dataset.action !== "paste") actions[t.dataset.action](t);
    },
    keydown: (e) => {
      e.stopPropagation(); // the notebook's command-mode shortcuts must not see keys typed in the wizard
      const t = actionOf(e.target);
      if (e.key !== "Enter" || !t || t.tagName !== "INPUT" || !["text", "password"].includes(t.type)) return;
      e.preventDefault(); // Enter commits a text field like leaving it does
      actions[t.dataset.action](t);
    },
  };
  for (const [type, fn] of Object.entries(handlers)) root.addEventListener(type, fn);
  return () => { for (const [type, fn] of Object.entries(handlers)) root.removeEventListener(type, fn); };
}

/** Model events: every trait redraws; some changes and kernel answers are also news to announce. */
function follow(model, redraw, announce, pending) {
  const handlers = {
    "change:step": () => announce(stepAnnouncement(state(model))),
    "change:submitting": () => { if (model.get("submitting")) announce("Submitting…"); },
    "change:submitted": () => {
      if (model.get("submitted").length) announce(submittedSummary(model.get("submitted")));
    },
    "msg:custom": (msg) => {
      if (msg && msg.type === "secret_received" && msg.name === pending.secret) {
        pending.secret = null;
        announce(secretAnnouncement(model.get("secrets"), msg.name));
      } else if (msg && msg.type === "rescanned" && pending.rescan) {
        pending.rescan = false;
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
    "data-lm-suppress-shortcuts": "true" }, content, live);
  el.append(root);
  /** The one live region: its text changes, the node stays, so screen readers keep listening to it. */
  const announce = (text) => {
    live.textContent = live.textContent === text ? `${text}\u00a0` : text; // repeated news is still news
  };
  const pending = { secret: null, rescan: false };
  const { draw, redraw } = redrawer(model, content, uid);
  const unlisten = listen(root, content, actionsFor(model, content, announce, pending));
  const unfollow = follow(model, redraw, announce, pending);
  draw();
  return () => { unlisten(); unfollow(); };
}

export default { render };
