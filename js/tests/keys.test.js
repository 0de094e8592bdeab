import assert from "node:assert/strict";
import { test } from "node:test";

import { keyRoute } from "../keys.js";

const key = (k, mods = {}) => ({ key: k, ctrlKey: false, metaKey: false, ...mods });

test("single keys stay in the view: command mode's a, b, m, d, arrows, Enter, Shift+Enter", () => {
  for (const k of ["a", "b", "m", "d", "ArrowDown", "Enter", " ", "Tab"]) assert.equal(keyRoute(key(k)), "own", k);
  assert.equal(keyRoute(key("Enter", { shiftKey: true })), "own");
  assert.equal(keyRoute(key("Control", { ctrlKey: true })), "own"); // a modifier alone is no shortcut yet
});

test("Ctrl and Cmd combinations reach the notebook: save, command palette, run the cell", () => {
  assert.equal(keyRoute(key("s", { ctrlKey: true })), "notebook");
  assert.equal(keyRoute(key("s", { metaKey: true })), "notebook");
  assert.equal(keyRoute(key("C", { ctrlKey: true, shiftKey: true })), "notebook");
  assert.equal(keyRoute(key("Enter", { ctrlKey: true })), "notebook");
  assert.equal(keyRoute(key("z", { ctrlKey: true })), "notebook"); // on a button: the notebook's undo
});

test("in a text field the text-editing combinations stay in the field; save still reaches the notebook", () => {
  for (const k of ["a", "c", "v", "x", "z", "ArrowLeft", "Backspace"]) {
    assert.equal(keyRoute(key(k, { ctrlKey: true }), true), "own", k);
  }
  assert.equal(keyRoute(key("s", { ctrlKey: true }), true), "notebook");
});

test("Escape leaves the view for its cell", () => {
  assert.equal(keyRoute(key("Escape")), "leave");
  assert.equal(keyRoute(key("Escape"), true), "leave");
});
