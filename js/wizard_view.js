// What the wizard shows for one state: the step list, the current step's body and the footer. Pure DOM
// building (no listeners): actions are named by `data-action`, stable identity by `data-key`, and a control
// that takes the place of others on redraw lists their keys in `data-focus-from` so focus can move over.
import {
  STEPS,
  allWarnings,
  canSubmit,
  configBadge,
  countLabel,
  destination,
  diffLineKind,
  diffSummary,
  domKey,
  fieldError,
  flowLabel,
  moveStep,
  noKeysText,
  pasteStatus,
  previewEmptyReason,
  problemLabel,
  secretStatus,
  stepIndex,
  stepProblems,
  submitBlockers,
  submittedSummary,
} from "./wizard_logic.js";
import { SUPPRESS } from "./keys.js";

const BACKEND_HINT = "'local' for the embedded backend on this machine, a URL, or blank for the default "
  + "(SYNTH_BACKEND_OVERRIDE or the hosted backend). The keys needed on step 2 depend on it.";

/** Controls that take keys. Each carries `data-lm-suppress-shortcuts` itself: Lumino stops looking for a
 * shortcut at the first element that has it, but tests the focused element against the shortcut's
 * selector before its ancestors, and Notebook 7 listens in the capture phase (before any handler of ours). */
const KEYED = new Set(["BUTTON", "INPUT", "SELECT", "SUMMARY", "PRE"]);

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  if (KEYED.has(el.tagName)) el.setAttribute(SUPPRESS, "true");
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

/** Build the view for one state; `uid` keeps ids unique when the same widget is shown twice; `local` is
 * what only this view knows (keys on their way to the kernel, an open "submit again" confirmation, the
 * steps the user has left or touched: a step's problems are flagged from then on, as a form checks a field
 * once it is left, not before anything was done). */
export function viewOf(s, uid, local) {
  const id = (key) => `${uid}-${domKey(key)}`;
  const keyed = (key) => ({ id: id(key), "data-key": key });
  const current = stepIndex(s.step);
  const steps = h("ol", { class: "synth-steps", "aria-label": "Wizard steps" }, STEPS.map((step, i) => {
    const problems = local.checked.has(step.id) ? stepProblems(s, step.id) : [];
    const label = `${i + 1}. ${step.label}`;
    return h("li", {}, h("button", { ...keyed(`step:${step.id}`), type: "button", class: "synth-step",
      "data-action": "step", "data-step": step.id, "aria-current": i === current ? "step" : undefined,
      "aria-label": problems.length ? `${label}, ${problemLabel(problems.length)}` : undefined,
      "data-testid": `step-${step.id}`, title: problems.join("\n") || undefined },
    label,
    problems.length ? h("span", { class: "synth-step-problems", "aria-hidden": "true", text: `⚠ ${problems.length}` }) : null));
  }));
  const ctx = { s, id, keyed, local };
  const body = { configs: configsStep, secrets: secretsStep, overrides: overridesStep, preview: previewStep,
    submit: submitStep }[STEPS[current].id](ctx);
  const edge = (delta) => moveStep(s.step, delta) === s.step;
  const footer = h("div", { class: "synth-footer" },
    h("button", { ...keyed("back"), type: "button", class: "synth-secondary", "data-action": "back",
      "aria-disabled": edge(-1) ? "true" : "false", text: "Back" }),
    h("button", { ...keyed("next"), type: "button", class: "synth-secondary", "data-action": "next",
      "aria-disabled": edge(1) ? "true" : "false", text: "Next" }));
  return h("div", { class: "synth-content" },
    h("h3", { class: "synth-title", text: s.forked_from ? `Fork job ${s.forked_from}` : "Launch a Synth training job" }),
    steps,
    h("div", { id: id(`body:${STEPS[current].id}`), class: "synth-body", role: "region", tabindex: "-1",
      "aria-label": `Step ${current + 1} of ${STEPS.length}: ${STEPS[current].label}` }, body),
    footer);
}

function warningList(id, key, warnings, testid) {
  if (!warnings || !warnings.length) return null;
  return h("ul", { id: id(key), class: "synth-warnings", "data-testid": testid },
    warnings.map((w) => h("li", { text: w })));
}

function configsStep({ s, id, keyed }) {
  const rows = s.configs.map((c) => {
    const key = `cfg:${c.path}`;
    const badge = configBadge(c);
    const warnings = c.valid ? c.warnings || [] : [];
    const described = [id(`${key}:badge`), c.valid ? null : id(`${key}:error`),
      warnings.length ? id(`${key}:warnings`) : null].filter(Boolean).join(" ");
    return h("li", { class: "synth-config" },
      h("input", { ...keyed(key), type: "checkbox", "data-action": "config", "data-path": c.path,
        "data-testid": `config-${c.path}`, checked: s.selected.includes(c.path), "aria-describedby": described,
        "aria-invalid": c.valid ? undefined : "true" }),
      h("label", { for: id(key) }, h("span", { class: "synth-path", text: c.path }), " ",
        h("span", { class: "synth-flow", text: `(${flowLabel(c)})` })),
      h("span", { id: id(`${key}:badge`), class: `synth-badge synth-badge--${badge.kind}`,
        "data-testid": `badge-${c.path}`, title: badge.title || undefined, text: badge.text }),
      c.valid ? null : h("div", { id: id(`${key}:error`), class: "synth-error", text: c.error }),
      warningList(id, `${key}:warnings`, warnings, `warnings-${c.path}`));
  });
  return h("div", {},
    h("fieldset", { class: "synth-fieldset" },
      h("legend", { text: "Training configs in this notebook's folder (pick one or more)" }),
      rows.length ? h("ul", { class: "synth-list" }, rows) : h("p", { text: "No training configs (.toml) found here." }),
      h("button", { ...keyed("rescan"), type: "button", class: "synth-secondary", "data-action": "rescan",
        text: "Rescan folder" })),
    backendField({ s, id, keyed }));
}

/** The backend comes first: which keys a job needs (step 2) depends on where it runs. */
function backendField({ s, id, keyed }) {
  const error = s.override_errors.backend || "";
  const [msgId, msgNode] = fieldMessage(id, "backend", error, BACKEND_HINT, "override-backend-msg");
  const now = !error && s.backend_url
    ? h("p", { class: "synth-hint", "data-testid": "backend-now",
      text: `Jobs go to ${s.backend_url}${s.backend_embedded ? " (the embedded local backend)" : ""}.` }) : null;
  return h("fieldset", { class: "synth-fieldset" },
    h("legend", { text: "Where the jobs run" }),
    h("div", { class: `synth-field${error ? " synth-field--invalid" : ""}` },
      h("label", { for: id("backend"), text: "Backend" }),
      h("input", { ...keyed("backend"), type: "text", "data-action": "backend", value: s.backend,
        placeholder: "local, http://host:port, or blank", "data-testid": "override-backend",
        "aria-describedby": msgId, "aria-invalid": error ? "true" : "false" }),
      msgNode),
    now);
}

function secretsStep({ s, id, keyed, local }) {
  const rows = s.secrets.map((row) => {
    const pending = local.pastes[row.name];
    const status = pending ? pasteStatus(row.name, pending) : secretStatus(row);
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
  const where = s.backend_url ? ` for ${s.backend_embedded ? "the embedded local backend" : s.backend_url}` : "";
  return h("div", {},
    h("p", { id: id("secrets-caption"), class: "synth-caption",
      text: `Keys the selected configs need${where} (values are masked; they never leave the kernel)` }),
    s.secrets.length ? h("ul", { class: "synth-list synth-secrets", "aria-labelledby": id("secrets-caption") }, rows)
      : h("p", { class: "synth-hint", "data-testid": "no-keys", text: noKeysText(s) }),
    h("div", { class: "synth-row" },
      h("label", { for: id("env-file"), text: "Read keys from" }),
      h("select", { ...keyed("env-file"), "data-action": "env-file", "aria-describedby": id("env-file:hint") },
        h("option", { value: "", text: "automatic", selected: !s.env_file }),
        s.env_files_available.map((f) => h("option", { value: f, text: `the file ${f}`, selected: f === s.env_file }))),
      h("span", { id: id("env-file:hint"), class: "synth-hint",
        text: "automatic: the kernel's environment, then the nearest .env file above the config or this notebook. "
          + "A file picked here comes first." })),
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

function overridesStep({ s, id, keyed }) {
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
    h("legend", { text: "Overrides (prefilled from the first selected config)" }), fields);
}

/** The payload as JSON lines; a long integer list is one line ("80 seeds: 0…79") that a button unfolds. */
function payload(p, keyed, local) {
  const lines = (p.lines && p.lines.length ? p.lines : p.preview.split("\n").map((text) => ({ text })));
  const fold = (line, i) => {
    const key = `fold:${p.path}:${i}`;
    const open = local.unfolded.has(key);
    return [h("button", { ...keyed(key), type: "button", class: "synth-fold", "data-action": "fold", "data-fold": key,
      "aria-expanded": open ? "true" : "false", "data-testid": "fold", text: line.fold }),
    open ? h("span", { class: "synth-fold-full", "data-testid": "fold-full", text: line.full }) : null];
  };
  return h("pre", { ...keyed(`payload:${p.path}`), class: "synth-json", tabindex: "0",
    "aria-label": `Payload for ${p.path}` }, lines.map((line, i) => h("span", { class: "synth-line" }, line.text,
    line.fold ? fold(line, i) : null, line.fold ? line.after : null, "\n")));
}

function requests(p, id) {
  if (!p.steps || !p.steps.length) return null;
  return h("ol", { id: id(`steps:${p.path}`), class: "synth-requests", "aria-label": `Requests for ${p.path}`,
    "data-testid": `requests-${p.path}` }, p.steps.map((st) => h("li", {},
    h("code", { text: `${st.method} ${st.path}` }),
    st.file ? h("span", { class: "synth-upload", "data-testid": "upload",
      text: ` uploads ${st.file} (${st.size})${st.limit ? `, first ${st.limit} lines` : ""}` }) : null,
    st.what ? ` — ${st.what}` : null)));
}

/** A card's static HTML, built (and masked) by the kernel: the same card `%synth_train --check` shows. */
function cardNode(card) {
  const node = h("div", { class: `synth-card synth-card--${card.ok ? "ok" : "bad"}`, "data-testid": `card-${card.path}` });
  node.innerHTML = card.html;
  return node;
}

/** "Run pre-flight check": task app, one dry rollout, data and an estimate for what is previewed; no job. */
function preflightSection({ s, id, keyed }) {
  const cards = s.preflight || [];
  return h("section", { class: "synth-preflight", "aria-labelledby": id("preflight-caption"), "data-testid": "preflight" },
    h("p", { id: id("preflight-caption"), class: "synth-caption",
      text: "Pre-flight check: the task app, one dry rollout, the data and an estimate. It never sends a job." }),
    h("button", { ...keyed("preflight"), type: "button", class: "synth-secondary", "data-action": "preflight",
      "aria-disabled": s.preflight_running ? "true" : "false", "data-testid": "preflight-run",
      text: s.preflight_running ? "Checking…" : (cards.length ? "Run the pre-flight check again" : "Run pre-flight check") }),
    s.preflight_error ? h("div", { class: "synth-error", role: "alert", text: s.preflight_error }) : null,
    cards.map(cardNode));
}

function previewStep(ctx) {
  const { s, id, keyed, local } = ctx;
  if (!s.previews.length) return h("p", { class: "synth-hint", "data-testid": "preview-empty", text: previewEmptyReason(s) });
  return h("div", {}, preflightSection(ctx), s.previews.map((p) => h("details", { id: id(`preview:${p.path}`), class: "synth-preview",
    open: true, "data-testid": `preview-${p.path}` },
  h("summary", { ...keyed(`preview-summary:${p.path}`), text: `${p.path} — ${flowLabel(p)}` }),
  p.error ? h("div", { id: id(`preview-error:${p.path}`), class: "synth-error", role: "alert", text: p.error }) : null,
  warningList(id, `preview-warnings:${p.path}`, p.warnings, `preview-warnings-${p.path}`),
  requests(p, id),
  p.preview ? payload(p, keyed, local) : null,
  p.has_last ? h("details", { id: id(`diff:${p.path}`), class: "synth-diff", open: Boolean(p.diff_open),
    "data-testid": `diff-${p.path}` },
    h("summary", { ...keyed(`diff-summary:${p.path}`), text: diffSummary(p) }),
    p.diff.length ? h("pre", {}, p.diff.map((line) => h("span", { class: `synth-diff--${diffLineKind(line)}`, text: `${line}\n` }))) : null)
    : h("p", { class: "synth-hint", text: "No earlier submission from this notebook to compare with." }))));
}

/** The payloads last submitted from this notebook take two deliberate presses: "Submit the same again…", then yes. */
function againControls({ s, keyed, local }) {
  const count = countLabel(s.previews.length, "job");
  return h("div", { class: "synth-again" },
    h("p", { class: "synth-hint", text: `These are the payloads last submitted from this notebook: sending them again creates ${count} more.` }),
    h("button", { ...keyed("again"), type: "button", class: "synth-secondary", "data-action": "again",
      "data-focus-from": "submit again-yes again-no", "aria-expanded": local.confirmAgain ? "true" : "false",
      text: "Submit the same again…" }),
    local.confirmAgain ? h("div", { class: "synth-row", role: "group", "aria-label": "Confirm a duplicate submission" },
      h("button", { ...keyed("again-yes"), type: "button", class: "synth-secondary", "data-action": "again-yes",
        text: `Yes, create ${count} more` }),
      h("button", { ...keyed("again-no"), type: "button", class: "synth-secondary", "data-action": "again-no",
        text: "No, keep what I have" })) : null);
}

function submitStep(ctx) {
  const { s, id, keyed } = ctx;
  const blockers = submitBlockers(s);
  const ok = canSubmit(s);
  const again = s.duplicate && !s.submitting;
  const why = blockers.length && !again;
  const warnings = allWarnings(s);
  const count = countLabel(s.previews.length || s.selected.length, "job");
  return h("div", {},
    h("p", { class: "synth-destination", "data-testid": "destination", text: destination(s) }),
    warnings.length ? h("div", { class: "synth-warn-box" },
      h("p", { id: id("warnings-caption"), text: `${countLabel(warnings.length, "warning")} (not blocking; check them before you submit):` }),
      warningList(id, "submit-warnings", warnings, "submit-warnings")) : null,
    again ? againControls(ctx) : h("button", { ...keyed("submit"), type: "button", class: "synth-submit synth-primary",
      "data-action": "submit", "data-focus-from": "again again-yes", "aria-disabled": ok ? "false" : "true",
      "aria-describedby": why ? id("why") : undefined, text: s.submitting ? "Submitting…" : `Submit ${count}` }),
    why ? h("ul", { id: id("why"), class: "synth-blockers" }, blockers.map((b) => h("li", { text: b }))) : null,
    s.submit_error ? h("div", { id: id("submit-error"), class: "synth-error", role: "alert", "data-testid": "submit-error",
      text: s.submit_error }) : null,
    s.submitted.length ? h("div", { id: id("submitted"), class: "synth-done", "data-testid": "submitted" },
      h("p", { text: `${submittedSummary(s.submitted)} Sent to ${s.submitted_to}.` }),
      h("ul", {}, s.submitted.map((j) => h("li", {}, h("code", { class: "synth-job-id", text: j.job_id }), ` ${j.flow} · ${j.path}`))),
      h("p", { class: "synth-hint", text: "The monitor panel for each job appears below this wizard." })) : null);
}
