// Pure functions behind the wizard view: no DOM, no model, so node's test runner can check them.
// The kernel is the authority on validation; these mirror its rules for instant, inline feedback.

export const STEPS = [
  { id: "configs", label: "Configs" },
  { id: "secrets", label: "Secrets" },
  { id: "overrides", label: "Overrides" },
  { id: "preview", label: "Preview" },
  { id: "submit", label: "Submit" },
];

export function stepIndex(step) {
  const i = STEPS.findIndex((s) => s.id === step);
  return i < 0 ? 0 : i;
}

/** The step `delta` positions away from `step`, clamped to the first/last step. */
export function moveStep(step, delta) {
  const i = Math.min(STEPS.length - 1, Math.max(0, stepIndex(step) + delta));
  return STEPS[i].id;
}

/** Badge for a discovered config: valid (green), valid with warnings (yellow) or invalid (red). */
export function configBadge(config) {
  if (!config.valid) return { text: "invalid", kind: "error", title: config.error || "invalid config" };
  const warnings = config.warnings || [];
  if (!warnings.length) return { text: "valid", kind: "ok", title: "" };
  return { text: `valid · ${countLabel(warnings.length, "warning")}`, kind: "warn", title: warnings.join("\n") };
}

/** "1 warning", "2 warnings". */
export function countLabel(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function flowLabel(config) {
  const flow = config.flow || "unknown flow";
  return config.algorithm ? `${flow} · ${config.algorithm}` : flow;
}

/** Add or remove `path` from the selection, keeping the order of `all` (the picker order). */
export function toggleSelection(selected, path, all) {
  const set = new Set(selected);
  if (set.has(path)) set.delete(path);
  else set.add(path);
  const order = all && all.length ? all : [...set];
  return order.filter((p) => set.has(p));
}

/** One line per required key: where it was found (plain words from the kernel) and its masked value. */
export function secretStatus(row) {
  if (!row.found) return { text: row.near ? `missing (${row.near})` : "missing", kind: "error" };
  const where = row.where || (row.source ? `found in ${row.source}` : "found");
  return { text: row.masked ? `${where} (${row.masked})` : where, kind: "ok" };
}

/** A pasted key on its way to the kernel: "sending", or no answer after a while ("unconfirmed"/"failed"). */
export function pasteStatus(name, state) {
  if (state === "sending") return { text: `sending ${name} to the kernel…`, kind: "pending" };
  if (state === "failed") {
    return { text: `${name} did not reach the kernel (no connection). Paste it again once the kernel runs.`,
      kind: "error" };
  }
  return { text: `the kernel has not confirmed ${name}: it may be busy or stopped. This updates when it answers; `
    + "after a restart, paste the key again.", kind: "error" };
}

/** Same rules as the kernel's `parse_overrides`: blank is fine (the config's value is used). */
export function overrideError(spec, value) {
  if (value === undefined || value === null || value === "") return "";
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

/** The error to show under a field: the kernel's message wins, else the local check. */
export function fieldError(spec, value, kernelErrors) {
  return (kernelErrors && kernelErrors[spec.name]) || overrideError(spec, value);
}

/** Why submitting is not possible right now (empty when it is). */
export function submitBlockers(state) {
  const out = [];
  if (state.submitting) out.push("Submitting…");
  const local = (state.override_fields || []).filter((s) => overrideError(s, (state.overrides || {})[s.name]));
  if (local.length) out.push("Fix the highlighted overrides.");
  for (const b of state.blockers || []) if (!out.includes(b)) out.push(b);
  if (!out.length && !state.can_submit) out.push("Waiting for the kernel to validate.");
  return out;
}

export function canSubmit(state) {
  return Boolean(state.can_submit) && submitBlockers(state).length === 0;
}

/** Problems that belong to a step, for the step's badge in the navigation. */
export function stepProblems(state, step) {
  const configs = state.configs || [];
  switch (step) {
    case "configs": {
      const chosen = configs.filter((c) => (state.selected || []).includes(c.path));
      const backend = (state.override_errors || {}).backend;
      const out = chosen.length ? chosen.filter((c) => !c.valid).map((c) => `${c.path}: ${c.error}`)
        : ["Select at least one config."];
      return backend ? [...out, `Backend: ${backend}`] : out;
    }
    case "secrets":
      return (state.secrets || []).filter((r) => !r.found).map((r) => `${r.name} is missing`);
    case "overrides":
      return Object.entries(state.override_errors || {}).filter(([k]) => k !== "backend").map(([, v]) => v);
    case "preview":
      return (state.previews || []).filter((p) => p.error).map((p) => `${p.path}: ${p.error}`);
    default:
      return [];
  }
}

/** CSS modifier for one line of a unified diff. */
export function diffLineKind(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

/** What the live region says when the pre-flight check returns: each config's verdict, or why it failed. */
export function preflightAnnouncement(cards, error) {
  if (error) return error;
  if (!cards || !cards.length) return "The pre-flight check returned no card.";
  return `Pre-flight check done (nothing was sent): ${cards.map((c) => `${c.path} ${c.ok ? "ready" : "not ready"}`).join("; ")}.`;
}

/** The diff's heading: what the payload is compared with (the last submission, or a forked parent job). */
export function diffSummary(preview) {
  const label = preview.diff_label || "the last submission from this notebook";
  return preview.diff && preview.diff.length ? `Changes since ${label}` : `Same as ${label}`;
}

/** "1 job → http://…/api (the embedded local backend)": what Submit sends, and where. */
export function destination(state) {
  const count = (state.previews || []).length || (state.selected || []).length;
  const where = state.backend_url || "no usable backend yet (see step 1)";
  return `${countLabel(count, "job")} → ${where}${state.backend_embedded ? " (the embedded local backend)" : ""}`;
}

/** Why the Preview step has nothing to show, pointing at the step to fix. */
export function previewEmptyReason(state) {
  const errors = state.override_errors || {};
  if (errors.backend) return `Nothing to preview: the backend is not usable (step 1): ${errors.backend}`;
  if (!(state.selected || []).length) return "Nothing to preview: select a config on step 1.";
  if (Object.keys(errors).length) return "Nothing to preview: fix the highlighted overrides on step 3.";
  const chosen = (state.configs || []).filter((c) => (state.selected || []).includes(c.path));
  if (chosen.length && chosen.every((c) => !c.valid)) return "Nothing to preview: the selected config is invalid (step 1).";
  return "Waiting for the kernel to prepare the preview.";
}

/** Every warning of the previewed configs, "path: warning", for the Submit step. */
export function allWarnings(state) {
  return (state.previews || []).flatMap((p) => (p.warnings || []).map((w) => `${p.path}: ${w}`));
}

export function submittedSummary(submitted) {
  if (!submitted || !submitted.length) return "";
  const ids = submitted.map((s) => s.job_id).join(", ");
  return submitted.length === 1 ? `Created job ${ids}.` : `Created ${submitted.length} jobs: ${ids}.`;
}

/** Add (`on`) or remove `path` from the selection, keeping picker order; a no-op if already so. */
export function selectPath(selected, path, on, all) {
  return selected.includes(path) === Boolean(on) ? [...selected] : toggleSelection(selected, path, all);
}

/**
 * A fragment safe in an element id for any key (a path, a variable name), one-to-one: letters, digits
 * and `-` stay, every other character becomes `_` plus its code point in hex and `_`.
 */
export function domKey(key) {
  return String(key).replace(/[^A-Za-z0-9-]/g, (ch) => `_${ch.codePointAt(0).toString(16)}_`);
}

export function problemLabel(count) {
  return count === 1 ? "1 problem" : `${count} problems`;
}

/**
 * What the live region says when a step opens: where the user is and what is wrong there, and, when the
 * user just left a step that has problems (`left`), that step's problems first: it is checked on leaving.
 */
export function stepAnnouncement(state, left = null) {
  const i = stepIndex(state.step);
  const problems = stepProblems(state, STEPS[i].id);
  const head = `Step ${i + 1} of ${STEPS.length}: ${STEPS[i].label}.`;
  const here = problems.length ? `${head} ${problemLabel(problems.length)}: ${problems.join("; ")}` : head;
  const before = left && left !== STEPS[i].id ? stepProblems(state, left) : [];
  if (!before.length) return here;
  const j = stepIndex(left);
  return `Step ${j + 1} (${STEPS[j].label}) has ${problemLabel(before.length)}: ${before.join("; ").replace(/\.$/, "")}. ${here}`;
}

/** The step a control of the form sits on (its `data-action`), which it marks as touched. */
export function stepOfAction(action) {
  if (["config", "rescan", "backend"].includes(action)) return "configs";
  if (["use", "paste", "env-file", "use-modal", "modal-secret"].includes(action)) return "secrets";
  if (action === "override") return "overrides";
  return null;
}

/** What the Secrets step says when no key is asked for: none is needed, or nothing valid is selected yet. */
export function noKeysText(state) {
  const valid = new Set((state.configs || []).filter((c) => c.valid).map((c) => c.path));
  if (!(state.selected || []).some((p) => valid.has(p))) {
    return "No valid config is selected (step 1): the keys its jobs need are listed here once one is.";
  }
  return "No keys needed.";
}

export function rescanAnnouncement(configs) {
  const all = configs || [];
  const invalid = all.filter((c) => !c.valid).length;
  const found = all.length === 1 ? "1 config found" : `${all.length} configs found`;
  return `Folder rescanned: ${found}${invalid ? `, ${invalid} invalid` : ""}.`;
}

/** What the live region says once the kernel has taken (or dropped) a pasted key. */
export function secretAnnouncement(rows, name) {
  const row = (rows || []).find((r) => r.name === name);
  if (!row || !row.found) return `${name} is still missing.`;
  return `${name} accepted: ${secretStatus(row).text}.`;
}

/** What choosing a .env file (or none) means for the keys, said when the choice changes. */
export function envFileAnnouncement(path) {
  return path ? `Keys are now read from ${path} (then the environment).`
    : "No .env file: keys come from the environment or are pasted.";
}
