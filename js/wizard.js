// The %synth_train wizard view (anywidget AFM). The kernel owns all state and validation; this file
// only draws the synced traits and reports user actions. Secrets: the view only ever receives masked
// values; a pasted key leaves through model.send and the password field is emptied at once.
import {
  STEPS,
  canSubmit,
  configBadge,
  diffLineKind,
  fieldError,
  flowLabel,
  moveStep,
  secretStatus,
  stepIndex,
  stepProblems,
  submitBlockers,
  submittedSummary,
  toggleSelection,
} from "./wizard_logic.js";

const TRAITS = [
  "step", "configs", "selected", "env_files_available", "env_file", "use_modal", "modal_secret", "secrets",
  "backend", "override_fields", "overrides", "override_errors", "previews", "blockers", "can_submit",
  "submitting", "submitted", "submit_error",
];

let viewCounter = 0;

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "checked" || key === "disabled" || key === "value") el[key] = value;
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

/** Enter commits a text field like leaving it does (the notebook would otherwise take the key). */
function commitOnEnter(input, commit) {
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    e.stopPropagation();
    commit(input.value);
  });
  input.addEventListener("change", () => commit(input.value));
  return input;
}

function configsStep(model, s, uid) {
  const all = s.configs.map((c) => c.path);
  const rows = s.configs.map((c, i) => {
    const id = `${uid}-cfg-${i}`;
    const badge = configBadge(c);
    return h("li", { class: "synth-config" },
      h("input", { type: "checkbox", id, "data-testid": `config-${c.path}`, checked: s.selected.includes(c.path),
        "aria-describedby": `${id}-badge`,
        onchange: () => set(model, "selected", toggleSelection(s.selected, c.path, all)) }),
      h("label", { for: id }, h("span", { class: "synth-path", text: c.path }),
        h("span", { class: "synth-flow", text: flowLabel(c) })),
      h("span", { id: `${id}-badge`, class: `synth-badge synth-badge--${badge.kind}`, title: badge.title || undefined,
        text: badge.text }),
      c.valid ? null : h("div", { class: "synth-error", role: "note", text: c.error }));
  });
  return h("fieldset", { class: "synth-fieldset" },
    h("legend", { text: "Training configs in this notebook's folder (pick one or more)" }),
    rows.length ? h("ul", { class: "synth-list" }, rows) : h("p", { text: "No training configs (.toml) found here." }),
    h("button", { type: "button", class: "synth-secondary", onclick: () => model.send({ type: "refresh" }),
      text: "Rescan folder" }));
}

function secretsStep(model, s, uid) {
  const rows = s.secrets.map((row, i) => {
    const status = secretStatus(row);
    const id = `${uid}-sec-${i}`;
    const cells = [
      h("th", { scope: "row", text: row.name }),
      h("td", { class: `synth-status synth-status--${status.kind}`, "data-testid": `secret-${row.name}`, text: status.text }),
    ];
    const paste = h("input", { type: "password", id, autocomplete: "off", spellcheck: "false",
      "aria-label": `Paste ${row.name}`, placeholder: row.found ? "replace (optional)" : "paste key" });
    const use = () => {
      const value = paste.value;
      paste.value = ""; // cleared as soon as it is read: the key never stays in the page
      if (value) model.send({ type: "paste_secret", name: row.name, value });
    };
    paste.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); use(); } });
    cells.push(h("td", {}, paste, h("button", { type: "button", class: "synth-secondary", onclick: use,
      "aria-label": `Use pasted ${row.name}`, text: "Use" })));
    return h("tr", {}, cells);
  });
  const envId = `${uid}-env`;
  const modalId = `${uid}-modal`;
  return h("div", {},
    h("table", { class: "synth-table" },
      h("caption", { text: "Required keys (values are masked; they never leave the kernel)" }),
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Key" }), h("th", { scope: "col", text: "Status" }),
        h("th", { scope: "col", text: "Paste a key" }))),
      h("tbody", {}, rows)),
    h("div", { class: "synth-row" },
      h("label", { for: envId, text: ".env file" }),
      h("select", { id: envId, onchange: (e) => set(model, "env_file", e.target.value) },
        h("option", { value: "", text: "(automatic: environment and nearest .env)", selected: !s.env_file }),
        s.env_files_available.map((f) => h("option", { value: f, text: f, selected: f === s.env_file })))),
    h("div", { class: "synth-row" },
      h("input", { type: "checkbox", id: modalId, checked: s.use_modal,
        onchange: (e) => set(model, "use_modal", e.target.checked) }),
      h("label", { for: modalId, text: "Also read a Modal secret" }),
      s.use_modal ? commitOnEnter(h("input", { type: "text", "aria-label": "Modal secret name", value: s.modal_secret }),
        (v) => set(model, "modal_secret", v.trim())) : null));
}

function overridesStep(model, s, uid) {
  const backendId = `${uid}-backend`;
  const fields = s.override_fields.map((spec) => {
    const id = `${uid}-ov-${spec.name}`;
    const value = (s.overrides || {})[spec.name];
    const error = fieldError(spec, value, s.override_errors);
    const update = (v) => set(model, "overrides", { ...model.get("overrides"), [spec.name]: v });
    const input = spec.type === "bool"
      ? h("input", { type: "checkbox", id, checked: value === true || value === "true",
          onchange: (e) => update(e.target.checked) })
      : commitOnEnter(h("input", { type: "text", id, value: value === undefined || value === null ? "" : String(value),
          inputmode: spec.type === "int" ? "numeric" : undefined, placeholder: spec.prefill || spec.hint,
          "aria-invalid": error ? "true" : "false", "aria-describedby": `${id}-msg`,
          "data-testid": `override-${spec.name}` }), update);
    return h("div", { class: `synth-field${error ? " synth-field--invalid" : ""}` },
      h("label", { for: id, text: spec.label }), input,
      h("div", { id: `${id}-msg`, class: error ? "synth-error" : "synth-hint", role: error ? "alert" : undefined,
        "data-testid": `override-error-${spec.name}`, text: error || spec.hint }));
  });
  return h("fieldset", { class: "synth-fieldset" },
    h("legend", { text: "Overrides (prefilled from the first selected config)" }),
    h("div", { class: "synth-field" },
      h("label", { for: backendId, text: "Backend" }),
      commitOnEnter(h("input", { type: "text", id: backendId, value: s.backend, "data-testid": "override-backend",
        "aria-describedby": `${backendId}-msg` }), (v) => set(model, "backend", v.trim())),
      h("div", { id: `${backendId}-msg`, class: s.override_errors.backend ? "synth-error" : "synth-hint",
        text: s.override_errors.backend || "'local' for the embedded backend, a URL, or blank for the default (SYNTH_BACKEND_OVERRIDE or the hosted backend)" })),
    fields);
}

function previewStep(s) {
  if (!s.previews.length) return h("p", { text: "Select a valid config to see what will be sent." });
  return h("div", {}, s.previews.map((p) => h("details", { class: "synth-preview", open: true, "data-testid": `preview-${p.path}` },
    h("summary", { text: `${p.path} — ${flowLabel(p)}` }),
    p.error ? h("div", { class: "synth-error", role: "alert", text: p.error }) : null,
    p.preview ? h("pre", { class: "synth-json", tabindex: "0", "aria-label": `Payload for ${p.path}`, text: p.preview }) : null,
    p.has_last ? h("details", { class: "synth-diff" },
      h("summary", { text: p.diff.length ? "Changes since the last submission from this notebook" : "Same as the last submission" }),
      p.diff.length ? h("pre", {}, p.diff.map((line) => h("span", { class: `synth-diff--${diffLineKind(line)}`, text: `${line}\n` }))) : null)
      : h("p", { class: "synth-hint", text: "No earlier submission from this notebook to compare with." }))));
}

function submitStep(model, s, uid) {
  const blockers = submitBlockers(s);
  const ok = canSubmit(s);
  return h("div", {},
    h("button", { type: "button", class: "synth-submit synth-primary", disabled: !ok, "aria-disabled": ok ? "false" : "true",
      "aria-describedby": `${uid}-why`, onclick: () => { if (canSubmit(state(model))) model.send({ type: "submit" }); },
      text: s.submitting ? "Submitting…" : `Submit ${s.submitted.length ? "again" : s.selected.length > 1 ? `${s.selected.length} jobs` : "job"}` }),
    blockers.length && !s.submitted.length
      ? h("ul", { id: `${uid}-why`, class: "synth-blockers" }, blockers.map((b) => h("li", { text: b })))
      : null,
    s.submit_error ? h("div", { class: "synth-error", role: "alert", "data-testid": "submit-error", text: s.submit_error }) : null,
    s.submitted.length ? h("div", { class: "synth-done", role: "status", "data-testid": "submitted" },
      h("p", { text: submittedSummary(s.submitted) }),
      h("ul", {}, s.submitted.map((j) => h("li", {}, h("code", { class: "synth-job-id", text: j.job_id }), ` ${j.flow} · ${j.path}`))),
      h("p", { class: "synth-hint", text: "The monitor panel for each job appears below." })) : null);
}

function render({ model, el }) {
  const uid = `synth-wiz-${++viewCounter}`;
  const root = h("section", { class: "synth-wizard", "aria-label": "Synth training wizard" });
  el.append(root);

  const draw = () => {
    const s = state(model);
    const focused = root.contains(document.activeElement) ? document.activeElement.id : null;
    const current = stepIndex(s.step);
    const nav = h("ol", { class: "synth-steps", "aria-label": "Wizard steps" }, STEPS.map((step, i) => {
      const problems = stepProblems(s, step.id);
      return h("li", {}, h("button", { type: "button", id: `${uid}-step-${step.id}`, class: "synth-step",
        "aria-current": i === current ? "step" : undefined, "data-testid": `step-${step.id}`,
        title: problems.join("\n") || undefined, onclick: () => set(model, "step", step.id) },
        `${i + 1}. ${step.label}`, problems.length ? h("span", { class: "synth-dot", "aria-label": `${problems.length} problem(s)`, text: " •" }) : null));
    }));
    const body = {
      configs: () => configsStep(model, s, uid),
      secrets: () => secretsStep(model, s, uid),
      overrides: () => overridesStep(model, s, uid),
      preview: () => previewStep(s),
      submit: () => submitStep(model, s, uid),
    }[STEPS[current].id]();
    const footer = h("div", { class: "synth-footer" },
      h("button", { type: "button", class: "synth-secondary", id: `${uid}-back`, disabled: current === 0,
        onclick: () => set(model, "step", moveStep(s.step, -1)), text: "Back" }),
      h("button", { type: "button", class: "synth-secondary", id: `${uid}-next`, disabled: current === STEPS.length - 1,
        onclick: () => set(model, "step", moveStep(s.step, 1)), text: "Next" }));
    root.replaceChildren(h("h3", { class: "synth-title", text: "Launch a Synth training job" }), nav,
      h("div", { class: "synth-body", role: "region", "aria-label": STEPS[current].label }, body), footer);
    if (focused) {
      const again = root.querySelector(`#${CSS.escape(focused)}`);
      if (again) again.focus();
    }
  };

  const handler = () => draw();
  for (const name of TRAITS) model.on(`change:${name}`, handler);
  const onMessage = (msg) => {
    if (msg && msg.type === "secret_received") draw();
  };
  model.on("msg:custom", onMessage);
  draw();
  return () => {
    for (const name of TRAITS) model.off(`change:${name}`, handler);
    model.off("msg:custom", onMessage);
  };
}

export default { render };
