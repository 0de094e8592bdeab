import assert from "node:assert/strict";
import { test } from "node:test";

import {
  GONE_STATUSES, maskedValue, notebookOf, onGoneStatus, replaceWidgetOutputs, rewriteOutputs, scopedStyle, statusSourceOf,
} from "../kernel_gone.js";

const VIEW = "application/vnd.jupyter.widget-view+json";

/** A Lumino-like signal: what JupyterLab's kernel connection offers as `statusChanged`. */
function signal() {
  const slots = new Set();
  return {
    connect: (slot) => slots.add(slot),
    disconnect: (slot) => slots.delete(slot),
    emit: (value) => { for (const slot of [...slots]) slot(null, value); },
    get size() { return slots.size; },
  };
}

/** A cell's output model as JupyterLab's notebook model exposes it (`get`, `set`, `length`). */
function outputs(values) {
  const list = values.map((v) => ({ type: v.output_type, data: v.data, metadata: v.metadata,
    executionCount: v.execution_count ?? null }));
  return {
    get length() { return list.length; },
    get: (i) => list[i],
    set: (i, v) => { list[i] = { type: v.output_type, data: v.data, executionCount: v.execution_count ?? null, raw: v }; },
  };
}

function notebook(cells) {
  return { cells: { length: cells.length, get: (i) => cells[i] } };
}

const widget = (id, type = "display_data") => ({ output_type: type, data: { [VIEW]: { model_id: id }, "text/plain": "" } });

test("a restart, an automatic restart after a crash, a shutdown and a dead kernel are gone; a network blip is not", () => {
  for (const status of ["restarting", "autorestarting", "dead", "terminating"]) assert.ok(GONE_STATUSES.has(status), status);
  for (const status of ["unknown", "starting", "idle", "busy"]) assert.ok(!GONE_STATUSES.has(status), status);
});

test("onGoneStatus calls back on a gone status only, and stops listening when asked", () => {
  const statusChanged = signal();
  let calls = 0;
  const stop = onGoneStatus({ statusChanged }, () => { calls += 1; });
  for (const status of ["unknown", "busy", "idle"]) statusChanged.emit(status); // the websocket dropped and came back
  assert.equal(calls, 0);
  statusChanged.emit("restarting");
  assert.equal(calls, 1);
  stop();
  assert.equal(statusChanged.size, 0);
});

test("statusSourceOf prefers the notebook's session, then a console's kernel, and finds nothing elsewhere", () => {
  const session = { statusChanged: signal() };
  const kernel = { statusChanged: signal(), status: "idle" };
  assert.equal(statusSourceOf({ context: { sessionContext: session }, kernel }), session);
  assert.equal(statusSourceOf({ kernel }), kernel);
  assert.equal(statusSourceOf({}), null);
  assert.equal(statusSourceOf(undefined), null);
  assert.equal(statusSourceOf({ kernel: { status: "idle" } }), null); // no signal to listen to
  assert.equal(statusSourceOf({ get context() { throw new TypeError("disposed"); } }), null);
});

test("replaceWidgetOutputs puts the copy where the widget's outputs were, and leaves everything else", () => {
  const first = outputs([{ output_type: "stream", data: {} }, widget("row"), widget("other")]);
  const second = outputs([widget("row", "execute_result")]);
  second.get(0).executionCount = 7;
  const markdown = { type: "markdown" };
  const nb = notebook([{ type: "code", outputs: first }, markdown, { type: "code", outputs: second }]);
  const copy = { "text/html": "<div class='synth-frozen'>gone</div>", "text/plain": "gone" };

  assert.equal(replaceWidgetOutputs(nb, new Set(["row"]), copy), 2);
  assert.deepEqual(first.get(1).raw, { output_type: "display_data", data: copy, metadata: {} });
  assert.equal(first.get(2).data[VIEW].model_id, "other");
  assert.equal(first.get(0).type, "stream");
  assert.deepEqual(second.get(0).raw, { output_type: "execute_result", data: copy, metadata: {}, execution_count: 7 });
  assert.equal(replaceWidgetOutputs(nb, new Set(["row"]), copy), 0); // nothing refers to it any more
});

test("scopedStyle nests the widget's stylesheet under the copy, and leaves out what is no stylesheet", () => {
  assert.equal(scopedStyle(".synth-toggle { padding: 0 12px; }"),
    "<style>.synth-frozen.synth-frozen { .synth-toggle { padding: 0 12px; } }</style>");
  assert.equal(scopedStyle(".a::after { content: '</style>'; }"),
    "<style>.synth-frozen.synth-frozen { .a::after { content: '<\\/style>'; } }</style>");
  for (const none of [undefined, null, "", "  ", "http://localhost:5173/monitor.css"]) assert.equal(scopedStyle(none), "");
});

test("rewriteOutputs replaces the rich outputs the rewrite returns data for, keeping their metadata", () => {
  const status = { output_type: "display_data", data: { "text/html": "<b>running</b>", "text/plain": "running" },
    metadata: { isolated: false } };
  const cell = outputs([status, { output_type: "display_data", data: { "text/plain": "other" } }]);
  const nb = notebook([{ type: "code", outputs: cell }]);
  const rewrite = (data) => (data["text/plain"] === "running" ? { ...data, "text/plain": "last seen running" } : null);
  assert.equal(rewriteOutputs(nb, rewrite), 1);
  assert.deepEqual(cell.get(0).raw, { output_type: "display_data", metadata: { isolated: false },
    data: { "text/html": "<b>running</b>", "text/plain": "last seen running" } });
  assert.equal(cell.get(1).data["text/plain"], "other");
});

test("notebookOf finds the notebook model behind ipywidgets' manager, and nothing elsewhere", () => {
  const nb = notebook([]);
  assert.equal(notebookOf({ widget_manager: { context: { model: nb } } }), nb);
  assert.equal(notebookOf({ widget_manager: {} }), null); // a console's manager, or another front end
  assert.equal(notebookOf(undefined), null);
  assert.equal(notebookOf({ widget_manager: { get context() { throw new TypeError("disposed"); } } }), null);
});

test("a static copy masks what the kernel masks in a field: URL credentials and key-shaped tokens", () => {
  assert.equal(maskedValue("http://admin:PW@127.0.0.1:8000/api"), "http://\u2022\u2022\u2022\u2022@127.0.0.1:8000/api");
  assert.equal(maskedValue("sk-live-abcdefghij1234567890"), "\u2022\u2022\u2022\u20227890");
  assert.equal(maskedValue("a1b2c3d4e5f6g7h8i9"), "\u2022\u2022\u2022\u2022h8i9");
  for (const plain of ["Qwen/Qwen3-4B", "local", "http://127.0.0.1:8000/api", "0-79", "abcdefghijklmnopqrstu"]) {
    assert.equal(maskedValue(plain), plain);
  }
});
