// wizard_logic.js
var STEPS = [
  { id: "configs", label: "Configs" },
  { id: "secrets", label: "Secrets" },
  { id: "overrides", label: "Overrides" },
  { id: "preview", label: "Preview" },
  { id: "submit", label: "Submit" }
];
function stepIndex(step) {
  const i = STEPS.findIndex((s) => s.id === step);
  return i < 0 ? 0 : i;
}
function moveStep(step, delta) {
  const i = Math.min(STEPS.length - 1, Math.max(0, stepIndex(step) + delta));
  return STEPS[i].id;
}
function configBadge(config) {
  if (config.valid) return { text: "valid", kind: "ok", title: "" };
  return { text: "invalid", kind: "error", title: config.error || "invalid config" };
}
function flowLabel(config) {
  const flow = config.flow || "unknown flow";
  return config.algorithm ? `${flow} \xB7 ${config.algorithm}` : flow;
}
function toggleSelection(selected, path, all) {
  const set2 = new Set(selected);
  if (set2.has(path)) set2.delete(path);
  else set2.add(path);
  const order = all && all.length ? all : [...set2];
  return order.filter((p) => set2.has(p));
}
function secretStatus(row) {
  if (!row.found) return { text: "missing", kind: "error" };
  const where = row.source ? `found in ${row.source}` : "found";
  return { text: row.masked ? `${where} (${row.masked})` : where, kind: "ok" };
}
function overrideError(spec, value) {
  if (value === void 0 || value === null || value === "") return "";
  if (spec.type === "bool") return typeof value === "boolean" || /^(true|false|1|0|yes|no|on|off)$/i.test(String(value).trim()) ? "" : "Expected true or false.";
  const text = String(value).trim();
  if (!text) return "";
  if (spec.type === "int") {
    if (!/^[+-]?\d+$/.test(text)) return `Expected a whole number, got '${text}'.`;
    if (parseInt(text, 10) < 1) return "Must be at least 1.";
  }
  if (spec.type === "url" && !/^https?:\/\//.test(text)) return "Must start with http:// or https://.";
  return "";
}
function fieldError(spec, value, kernelErrors) {
  return kernelErrors && kernelErrors[spec.name] || overrideError(spec, value);
}
function submitBlockers(state2) {
  const out = [];
  if (state2.submitting) out.push("Submitting\u2026");
  const local = (state2.override_fields || []).filter((s) => overrideError(s, (state2.overrides || {})[s.name]));
  if (local.length) out.push("Fix the highlighted overrides.");
  for (const b of state2.blockers || []) if (!out.includes(b)) out.push(b);
  if (!out.length && !state2.can_submit) out.push("Waiting for the kernel to validate.");
  return out;
}
function canSubmit(state2) {
  return Boolean(state2.can_submit) && submitBlockers(state2).length === 0;
}
function stepProblems(state2, step) {
  const configs = state2.configs || [];
  switch (step) {
    case "configs": {
      const chosen = configs.filter((c) => (state2.selected || []).includes(c.path));
      if (!chosen.length) return ["Select at least one config."];
      return chosen.filter((c) => !c.valid).map((c) => `${c.path}: ${c.error}`);
    }
    case "secrets":
      return (state2.secrets || []).filter((r) => !r.found).map((r) => `${r.name} is missing`);
    case "overrides":
      return Object.values(state2.override_errors || {});
    case "preview":
      return (state2.previews || []).filter((p) => p.error).map((p) => `${p.path}: ${p.error}`);
    default:
      return [];
  }
}
function diffLineKind(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}
function submittedSummary(submitted) {
  if (!submitted || !submitted.length) return "";
  const ids = submitted.map((s) => s.job_id).join(", ");
  return submitted.length === 1 ? `Created job ${ids}.` : `Created ${submitted.length} jobs: ${ids}.`;
}

// wizard.js
var TRAITS = [
  "step",
  "configs",
  "selected",
  "env_files_available",
  "env_file",
  "use_modal",
  "modal_secret",
  "secrets",
  "backend",
  "override_fields",
  "overrides",
  "override_errors",
  "previews",
  "blockers",
  "can_submit",
  "submitting",
  "submitted",
  "submit_error"
];
var viewCounter = 0;
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === void 0 || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "checked" || key === "disabled" || key === "value") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== void 0 && child !== false) el.append(child);
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
    return h(
      "li",
      { class: "synth-config" },
      h("input", {
        type: "checkbox",
        id,
        "data-testid": `config-${c.path}`,
        checked: s.selected.includes(c.path),
        "aria-describedby": `${id}-badge`,
        onchange: () => set(model, "selected", toggleSelection(s.selected, c.path, all))
      }),
      h(
        "label",
        { for: id },
        h("span", { class: "synth-path", text: c.path }),
        h("span", { class: "synth-flow", text: flowLabel(c) })
      ),
      h("span", {
        id: `${id}-badge`,
        class: `synth-badge synth-badge--${badge.kind}`,
        title: badge.title || void 0,
        text: badge.text
      }),
      c.valid ? null : h("div", { class: "synth-error", role: "note", text: c.error })
    );
  });
  return h(
    "fieldset",
    { class: "synth-fieldset" },
    h("legend", { text: "Training configs in this notebook's folder (pick one or more)" }),
    rows.length ? h("ul", { class: "synth-list" }, rows) : h("p", { text: "No training configs (.toml) found here." }),
    h("button", {
      type: "button",
      class: "synth-secondary",
      onclick: () => model.send({ type: "refresh" }),
      text: "Rescan folder"
    })
  );
}
function secretsStep(model, s, uid) {
  const rows = s.secrets.map((row, i) => {
    const status = secretStatus(row);
    const id = `${uid}-sec-${i}`;
    const cells = [
      h("th", { scope: "row", text: row.name }),
      h("td", { class: `synth-status synth-status--${status.kind}`, "data-testid": `secret-${row.name}`, text: status.text })
    ];
    const paste = h("input", {
      type: "password",
      id,
      autocomplete: "off",
      spellcheck: "false",
      "aria-label": `Paste ${row.name}`,
      placeholder: row.found ? "replace (optional)" : "paste key"
    });
    const use = () => {
      const value = paste.value;
      paste.value = "";
      if (value) model.send({ type: "paste_secret", name: row.name, value });
    };
    paste.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        e.stopPropagation();
        use();
      }
    });
    cells.push(h("td", {}, paste, h("button", {
      type: "button",
      class: "synth-secondary",
      onclick: use,
      "aria-label": `Use pasted ${row.name}`,
      text: "Use"
    })));
    return h("tr", {}, cells);
  });
  const envId = `${uid}-env`;
  const modalId = `${uid}-modal`;
  return h(
    "div",
    {},
    h(
      "table",
      { class: "synth-table" },
      h("caption", { text: "Required keys (values are masked; they never leave the kernel)" }),
      h("thead", {}, h(
        "tr",
        {},
        h("th", { scope: "col", text: "Key" }),
        h("th", { scope: "col", text: "Status" }),
        h("th", { scope: "col", text: "Paste a key" })
      )),
      h("tbody", {}, rows)
    ),
    h(
      "div",
      { class: "synth-row" },
      h("label", { for: envId, text: ".env file" }),
      h(
        "select",
        { id: envId, onchange: (e) => set(model, "env_file", e.target.value) },
        h("option", { value: "", text: "(automatic: environment and nearest .env)", selected: !s.env_file }),
        s.env_files_available.map((f) => h("option", { value: f, text: f, selected: f === s.env_file }))
      )
    ),
    h(
      "div",
      { class: "synth-row" },
      h("input", {
        type: "checkbox",
        id: modalId,
        checked: s.use_modal,
        onchange: (e) => set(model, "use_modal", e.target.checked)
      }),
      h("label", { for: modalId, text: "Also read a Modal secret" }),
      s.use_modal ? commitOnEnter(
        h("input", { type: "text", "aria-label": "Modal secret name", value: s.modal_secret }),
        (v) => set(model, "modal_secret", v.trim())
      ) : null
    )
  );
}
function overridesStep(model, s, uid) {
  const backendId = `${uid}-backend`;
  const fields = s.override_fields.map((spec) => {
    const id = `${uid}-ov-${spec.name}`;
    const value = (s.overrides || {})[spec.name];
    const error = fieldError(spec, value, s.override_errors);
    const update = (v) => set(model, "overrides", { ...model.get("overrides"), [spec.name]: v });
    const input = spec.type === "bool" ? h("input", {
      type: "checkbox",
      id,
      checked: value === true || value === "true",
      onchange: (e) => update(e.target.checked)
    }) : commitOnEnter(h("input", {
      type: "text",
      id,
      value: value === void 0 || value === null ? "" : String(value),
      inputmode: spec.type === "int" ? "numeric" : void 0,
      placeholder: spec.prefill || spec.hint,
      "aria-invalid": error ? "true" : "false",
      "aria-describedby": `${id}-msg`,
      "data-testid": `override-${spec.name}`
    }), update);
    return h(
      "div",
      { class: `synth-field${error ? " synth-field--invalid" : ""}` },
      h("label", { for: id, text: spec.label }),
      input,
      h("div", {
        id: `${id}-msg`,
        class: error ? "synth-error" : "synth-hint",
        role: error ? "alert" : void 0,
        "data-testid": `override-error-${spec.name}`,
        text: error || spec.hint
      })
    );
  });
  return h(
    "fieldset",
    { class: "synth-fieldset" },
    h("legend", { text: "Overrides (prefilled from the first selected config)" }),
    h(
      "div",
      { class: "synth-field" },
      h("label", { for: backendId, text: "Backend" }),
      commitOnEnter(h("input", {
        type: "text",
        id: backendId,
        value: s.backend,
        "data-testid": "override-backend",
        "aria-describedby": `${backendId}-msg`
      }), (v) => set(model, "backend", v.trim())),
      h("div", {
        id: `${backendId}-msg`,
        class: s.override_errors.backend ? "synth-error" : "synth-hint",
        text: s.override_errors.backend || "'local' for the embedded backend, a URL, or blank for the default (SYNTH_BACKEND_OVERRIDE or the hosted backend)"
      })
    ),
    fields
  );
}
function previewStep(s) {
  if (!s.previews.length) return h("p", { text: "Select a valid config to see what will be sent." });
  return h("div", {}, s.previews.map((p) => h(
    "details",
    { class: "synth-preview", open: true, "data-testid": `preview-${p.path}` },
    h("summary", { text: `${p.path} \u2014 ${flowLabel(p)}` }),
    p.error ? h("div", { class: "synth-error", role: "alert", text: p.error }) : null,
    p.preview ? h("pre", { class: "synth-json", tabindex: "0", "aria-label": `Payload for ${p.path}`, text: p.preview }) : null,
    p.has_last ? h(
      "details",
      { class: "synth-diff" },
      h("summary", { text: p.diff.length ? "Changes since the last submission from this notebook" : "Same as the last submission" }),
      p.diff.length ? h("pre", {}, p.diff.map((line) => h("span", { class: `synth-diff--${diffLineKind(line)}`, text: `${line}
` }))) : null
    ) : h("p", { class: "synth-hint", text: "No earlier submission from this notebook to compare with." })
  )));
}
function submitStep(model, s, uid) {
  const blockers = submitBlockers(s);
  const ok = canSubmit(s);
  return h(
    "div",
    {},
    h("button", {
      type: "button",
      class: "synth-submit synth-primary",
      disabled: !ok,
      "aria-disabled": ok ? "false" : "true",
      "aria-describedby": `${uid}-why`,
      onclick: () => {
        if (canSubmit(state(model))) model.send({ type: "submit" });
      },
      text: s.submitting ? "Submitting\u2026" : `Submit ${s.submitted.length ? "again" : s.selected.length > 1 ? `${s.selected.length} jobs` : "job"}`
    }),
    blockers.length && !s.submitted.length ? h("ul", { id: `${uid}-why`, class: "synth-blockers" }, blockers.map((b) => h("li", { text: b }))) : null,
    s.submit_error ? h("div", { class: "synth-error", role: "alert", "data-testid": "submit-error", text: s.submit_error }) : null,
    s.submitted.length ? h(
      "div",
      { class: "synth-done", role: "status", "data-testid": "submitted" },
      h("p", { text: submittedSummary(s.submitted) }),
      h("ul", {}, s.submitted.map((j) => h("li", {}, h("code", { class: "synth-job-id", text: j.job_id }), ` ${j.flow} \xB7 ${j.path}`))),
      h("p", { class: "synth-hint", text: "The monitor panel for each job appears below." })
    ) : null
  );
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
      return h("li", {}, h(
        "button",
        {
          type: "button",
          id: `${uid}-step-${step.id}`,
          class: "synth-step",
          "aria-current": i === current ? "step" : void 0,
          "data-testid": `step-${step.id}`,
          title: problems.join("\n") || void 0,
          onclick: () => set(model, "step", step.id)
        },
        `${i + 1}. ${step.label}`,
        problems.length ? h("span", { class: "synth-dot", "aria-label": `${problems.length} problem(s)`, text: " \u2022" }) : null
      ));
    }));
    const body = {
      configs: () => configsStep(model, s, uid),
      secrets: () => secretsStep(model, s, uid),
      overrides: () => overridesStep(model, s, uid),
      preview: () => previewStep(s),
      submit: () => submitStep(model, s, uid)
    }[STEPS[current].id]();
    const footer = h(
      "div",
      { class: "synth-footer" },
      h("button", {
        type: "button",
        class: "synth-secondary",
        id: `${uid}-back`,
        disabled: current === 0,
        onclick: () => set(model, "step", moveStep(s.step, -1)),
        text: "Back"
      }),
      h("button", {
        type: "button",
        class: "synth-secondary",
        id: `${uid}-next`,
        disabled: current === STEPS.length - 1,
        onclick: () => set(model, "step", moveStep(s.step, 1)),
        text: "Next"
      })
    );
    root.replaceChildren(
      h("h3", { class: "synth-title", text: "Launch a Synth training job" }),
      nav,
      h("div", { class: "synth-body", role: "region", "aria-label": STEPS[current].label }, body),
      footer
    );
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
var wizard_default = { render };
export {
  wizard_default as default
};
