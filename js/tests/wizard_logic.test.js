import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { buildSync } from "esbuild";

import { OPTIONS } from "../build.mjs";

import * as logic from "../wizard_logic.js";

const spec = (name, type) => ({ name, type, label: name, hint: "" });

test("moveStep clamps at both ends", () => {
  assert.equal(logic.moveStep("configs", -1), "configs");
  assert.equal(logic.moveStep("configs", 1), "secrets");
  assert.equal(logic.moveStep("submit", 1), "submit");
  assert.equal(logic.moveStep("unknown", 1), "secrets");
});

test("configBadge shows the first error as the tooltip of invalid configs", () => {
  assert.deepEqual(logic.configBadge({ valid: true }), { text: "valid", kind: "ok", title: "" });
  assert.deepEqual(logic.configBadge({ valid: true, warnings: [] }), { text: "valid", kind: "ok", title: "" });
  const bad = logic.configBadge({ valid: false, error: "rl.toml:3 [model.base]: required" });
  assert.equal(bad.kind, "error");
  assert.equal(bad.title, "rl.toml:3 [model.base]: required");
});

test("configBadge turns yellow for a valid config with warnings, listing them as its tooltip", () => {
  const typo = "unknown key hyperparameters.n_epoch (did you mean 'n_epochs'?) — ignored (not sent)";
  assert.deepEqual(logic.configBadge({ valid: true, warnings: [typo] }),
    { text: "valid · 1 warning", kind: "warn", title: typo });
  assert.equal(logic.configBadge({ valid: true, warnings: ["a", "b"] }).text, "valid · 2 warnings");
  assert.equal(logic.configBadge({ valid: false, error: "x", warnings: ["a"] }).kind, "error");
});

test("flowLabel includes the algorithm when there is one", () => {
  assert.equal(logic.flowLabel({ flow: "prompt_learning", algorithm: "gepa" }), "prompt_learning · gepa");
  assert.equal(logic.flowLabel({ flow: "sft", algorithm: "" }), "sft");
});

test("toggleSelection adds and removes while keeping picker order", () => {
  const all = ["a.toml", "b.toml", "c.toml"];
  assert.deepEqual(logic.toggleSelection(["c.toml"], "a.toml", all), ["a.toml", "c.toml"]);
  assert.deepEqual(logic.toggleSelection(["a.toml", "c.toml"], "a.toml", all), ["c.toml"]);
});

test("secretStatus says where the key came from in the kernel's words and shows only the masked value", () => {
  const found = logic.secretStatus({ name: "SYNTH_API_KEY", found: true, source: ".env:.env", where: "found in .env",
    masked: "••••abcd" });
  assert.deepEqual(found, { text: "found in .env (••••abcd)", kind: "ok" });
  const local = { name: "SYNTH_API_KEY", found: true, source: "local backend",
    where: "provided by the embedded local backend", masked: "••••wxyz" };
  assert.equal(logic.secretStatus(local).text, "provided by the embedded local backend (••••wxyz)");
  assert.deepEqual(logic.secretStatus({ name: "X", found: false }), { text: "missing", kind: "error" });
});

test("pasteStatus says a key is on its way, and when the kernel never confirmed it", () => {
  assert.deepEqual(logic.pasteStatus("K", "sending"), { text: "sending K to the kernel…", kind: "pending" });
  const late = logic.pasteStatus("K", "unconfirmed");
  assert.equal(late.kind, "error");
  assert.match(late.text, /kernel has not confirmed K: it may be busy or stopped/);
  assert.match(logic.pasteStatus("K", "failed").text, /did not reach the kernel/);
});

test("destination states how many jobs go where", () => {
  const s = { previews: [{ path: "a" }], backend_url: "http://127.0.0.1:5/api", backend_embedded: true };
  assert.equal(logic.destination(s), "1 job → http://127.0.0.1:5/api (the embedded local backend)");
  assert.equal(logic.destination({ ...s, previews: [{}, {}], backend_embedded: false }),
    "2 jobs → http://127.0.0.1:5/api");
  assert.equal(logic.destination({ selected: ["a"], previews: [], backend_url: "" }),
    "1 job → no usable backend yet (see step 1)");
});

test("previewEmptyReason points at the step to fix, and a bad backend at the backend", () => {
  const s = { selected: ["a.toml"], configs: [{ path: "a.toml", valid: true }], override_errors: {} };
  assert.match(logic.previewEmptyReason({ ...s, override_errors: { backend: "must start with http" } }),
    /backend is not usable \(step 1\): must start with http/);
  assert.match(logic.previewEmptyReason({ ...s, selected: [] }), /select a config on step 1/);
  assert.match(logic.previewEmptyReason({ ...s, override_errors: { examples: "x" } }), /overrides on step 3/);
  assert.match(logic.previewEmptyReason({ ...s, configs: [{ path: "a.toml", valid: false }] }), /invalid/);
});

test("allWarnings lists each config's warnings under its path", () => {
  const s = { previews: [{ path: "sft.toml", warnings: ["w1", "w2"] }, { path: "g.toml", warnings: [] }] };
  assert.deepEqual(logic.allWarnings(s), ["sft.toml: w1", "sft.toml: w2"]);
  assert.equal(logic.countLabel(1, "job"), "1 job");
  assert.equal(logic.countLabel(3, "job"), "3 jobs");
});

test("overrideError mirrors the kernel's type rules", () => {
  assert.equal(logic.overrideError(spec("examples", "int"), ""), "");
  assert.equal(logic.overrideError(spec("examples", "int"), "12"), "");
  assert.match(logic.overrideError(spec("examples", "int"), "ten"), /whole number/);
  assert.match(logic.overrideError(spec("examples", "int"), "0"), /at least 1/);
  assert.match(logic.overrideError(spec("task_url", "url"), "localhost:8000"), /http/);
  assert.equal(logic.overrideError(spec("task_url", "url"), "http://127.0.0.1:8102"), "");
  assert.equal(logic.overrideError(spec("allow_experimental", "bool"), true), "");
  assert.equal(logic.overrideError(spec("allow_experimental", "bool"), ""), "");
  assert.match(logic.overrideError(spec("allow_experimental", "bool"), "maybe"), /true or false/);
});

test("fieldError prefers the kernel's message", () => {
  const s = spec("model", "text");
  assert.equal(logic.fieldError(s, "x", { model: "unknown model 'x'" }), "unknown model 'x'");
  assert.equal(logic.fieldError(s, "x", {}), "");
});

test("submit stays disabled until the kernel says it can submit and nothing is flagged", () => {
  const base = {
    can_submit: true, submitting: false, blockers: [], overrides: { examples: "5" },
    override_fields: [spec("examples", "int")],
  };
  assert.equal(logic.canSubmit(base), true);
  const withBlankBool = { ...base, override_fields: [...base.override_fields, spec("allow_experimental", "bool")],
    overrides: { examples: "5", allow_experimental: "" } };
  assert.equal(logic.canSubmit(withBlankBool), true);
  assert.equal(logic.canSubmit({ ...base, can_submit: false }), false);
  assert.deepEqual(logic.submitBlockers({ ...base, can_submit: false }), ["Waiting for the kernel to validate."]);
  assert.equal(logic.canSubmit({ ...base, overrides: { examples: "five" } }), false);
  assert.equal(logic.canSubmit({ ...base, submitting: true }), false);
  const blocked = { ...base, can_submit: false, blockers: ["Provide the missing keys: SYNTH_API_KEY."] };
  assert.deepEqual(logic.submitBlockers(blocked), ["Provide the missing keys: SYNTH_API_KEY."]);
});

test("stepProblems reports per step", () => {
  const s = {
    configs: [{ path: "a.toml", valid: false, error: "bad" }, { path: "b.toml", valid: true }],
    selected: ["a.toml"],
    secrets: [{ name: "SYNTH_API_KEY", found: false }],
    override_errors: { examples: "Expected a whole number" },
    previews: [],
  };
  assert.deepEqual(logic.stepProblems(s, "configs"), ["a.toml: bad"]);
  assert.deepEqual(logic.stepProblems({ ...s, selected: [] }, "configs"), ["Select at least one config."]);
  assert.deepEqual(logic.stepProblems(s, "secrets"), ["SYNTH_API_KEY is missing"]);
  assert.deepEqual(logic.stepProblems(s, "overrides"), ["Expected a whole number"]);
  assert.deepEqual(logic.stepProblems(s, "submit"), []);
  const badBackend = { ...s, override_errors: { backend: "must start with http://" } };
  assert.deepEqual(logic.stepProblems(badBackend, "configs"), ["a.toml: bad", "Backend: must start with http://"]);
  assert.deepEqual(logic.stepProblems(badBackend, "overrides"), []);
});

test("diffLineKind classifies unified diff lines", () => {
  assert.equal(logic.diffLineKind("--- last submission"), "file");
  assert.equal(logic.diffLineKind("@@ -1,3 +1,3 @@"), "hunk");
  assert.equal(logic.diffLineKind('+  "model": "b"'), "add");
  assert.equal(logic.diffLineKind('-  "model": "a"'), "del");
  assert.equal(logic.diffLineKind('   "flow": "sft"'), "ctx");
});

test("diffSummary names what the payload is compared with", () => {
  assert.equal(logic.diffSummary({ diff: [], diff_label: "the parent job pl_1" }), "Same as the parent job pl_1");
  assert.equal(logic.diffSummary({ diff: ["-a", "+b"], diff_label: "the parent job pl_1" }),
    "Changes since the parent job pl_1");
  assert.equal(logic.diffSummary({ diff: [] }), "Same as the last submission from this notebook");
});

test("preflightAnnouncement gives each verdict, or the failure", () => {
  assert.equal(logic.preflightAnnouncement([{ path: "a.toml", ok: true }, { path: "b.toml", ok: false }], ""),
    "Pre-flight check done (nothing was sent): a.toml ready; b.toml not ready.");
  assert.equal(logic.preflightAnnouncement([], "The pre-flight check failed: boom"), "The pre-flight check failed: boom");
});

test("submittedSummary lists job ids", () => {
  assert.equal(logic.submittedSummary([]), "");
  assert.equal(logic.submittedSummary([{ job_id: "pl_1" }]), "Created job pl_1.");
  assert.equal(logic.submittedSummary([{ job_id: "a" }, { job_id: "b" }]), "Created 2 jobs: a, b.");
});

test("selectPath sets membership explicitly and keeps picker order", () => {
  const all = ["a.toml", "b.toml", "c.toml"];
  assert.deepEqual(logic.selectPath(["c.toml"], "a.toml", true, all), ["a.toml", "c.toml"]);
  assert.deepEqual(logic.selectPath(["a.toml", "c.toml"], "a.toml", true, all), ["a.toml", "c.toml"]);
  assert.deepEqual(logic.selectPath(["a.toml", "c.toml"], "a.toml", false, all), ["c.toml"]);
  assert.deepEqual(logic.selectPath(["c.toml"], "a.toml", false, all), ["c.toml"]);
});

test("domKey gives distinct, id-safe fragments for keys that differ only in punctuation", () => {
  const keys = ["cfg:configs/a-b.toml", "cfg:configs/a_b.toml", "cfg:configs/a b.toml", "paste:SYNTH_API_KEY"];
  const out = keys.map(logic.domKey);
  assert.equal(new Set(out).size, keys.length);
  for (const k of out) assert.match(k, /^[A-Za-z0-9_-]+$/);
  assert.equal(logic.domKey("next"), "next");
});

test("stepAnnouncement says where the user is and what is wrong there", () => {
  const s = { step: "secrets", secrets: [{ name: "ENVIRONMENT_API_KEY", found: false }], configs: [], selected: [] };
  assert.equal(logic.stepAnnouncement(s), "Step 2 of 5: Secrets. 1 problem: ENVIRONMENT_API_KEY is missing");
  assert.equal(logic.stepAnnouncement({ ...s, secrets: [] }), "Step 2 of 5: Secrets.");
  assert.equal(logic.problemLabel(2), "2 problems");
  const left = { step: "secrets", secrets: [], configs: [{ path: "a.toml", valid: true }], selected: [] };
  assert.equal(logic.stepAnnouncement(left, "configs"),
    "Step 1 (Configs) has 1 problem: Select at least one config. Step 2 of 5: Secrets.");
  assert.equal(logic.stepAnnouncement({ ...left, selected: ["a.toml"] }, "configs"), "Step 2 of 5: Secrets.");
});

test("a missing key set under a misspelt name says which and where", () => {
  const near = "found ENVIRONMENT_APIKEY: did you mean ENVIRONMENT_API_KEY (in .env line 3)?";
  assert.deepEqual(logic.secretStatus({ name: "ENVIRONMENT_API_KEY", found: false, near }),
    { text: `missing (${near})`, kind: "error" });
  assert.deepEqual(logic.secretStatus({ name: "ENVIRONMENT_API_KEY", found: false, near: "" }),
    { text: "missing", kind: "error" });
});

test("the Secrets step says no valid config is selected rather than that no key is needed", () => {
  const configs = [{ path: "a.toml", valid: true }, { path: "bad.toml", valid: false }];
  const text = "No valid config is selected (step 1): the keys its jobs need are listed here once one is.";
  assert.equal(logic.noKeysText({ configs, selected: [] }), text);
  assert.equal(logic.noKeysText({ configs, selected: ["bad.toml"] }), text);
  assert.equal(logic.noKeysText({ configs, selected: ["a.toml"] }), "No keys needed.");
});

test("a control's step is the one it marks as touched", () => {
  assert.equal(logic.stepOfAction("config"), "configs");
  assert.equal(logic.stepOfAction("backend"), "configs");
  assert.equal(logic.stepOfAction("paste"), "secrets");
  assert.equal(logic.stepOfAction("override"), "overrides");
  assert.equal(logic.stepOfAction("next"), null);
});

test("rescanAnnouncement counts configs and invalid ones", () => {
  assert.equal(logic.rescanAnnouncement([{ valid: true }, { valid: false }, { valid: true }]),
    "Folder rescanned: 3 configs found, 1 invalid.");
  assert.equal(logic.rescanAnnouncement([{ valid: true }]), "Folder rescanned: 1 config found.");
  assert.equal(logic.rescanAnnouncement([]), "Folder rescanned: 0 configs found.");
});

test("secretAnnouncement reports the accepted key by its masked value only", () => {
  const rows = [{ name: "ENVIRONMENT_API_KEY", found: true, source: "pasted", where: "pasted into the wizard",
    masked: "••••9a3f" }];
  assert.equal(logic.secretAnnouncement(rows, "ENVIRONMENT_API_KEY"),
    "ENVIRONMENT_API_KEY accepted: pasted into the wizard (••••9a3f).");
  assert.equal(logic.secretAnnouncement([{ name: "X", found: false }], "X"), "X is still missing.");
  assert.equal(logic.secretAnnouncement([], "X"), "X is still missing.");
});

test("the committed bundle is exactly what js/ builds, self-contained with a default render export", () => {
  const result = buildSync({ ...OPTIONS, write: false, logLevel: "silent" });
  assert.equal(result.errors.length, 0);
  for (const file of result.outputFiles) {
    const committed = readFileSync(file.path, "utf8");
    assert.equal(committed, file.text, `${file.path} is stale: run npm run build`);
    if (file.path.endsWith(".js")) {
      assert.doesNotMatch(committed, /^\s*import\s/m, "the ESM is loaded from a blob URL: no imports allowed");
      assert.match(committed, /export\s*\{[^}]*default/);
    }
  }
});

test("choosing a .env file, or none, is said in words", () => {
  assert.equal(logic.envFileAnnouncement(".env"), "Keys are now read from .env (then the environment).");
  assert.equal(logic.envFileAnnouncement(""), "No .env file: keys come from the environment or are pasted.");
});
