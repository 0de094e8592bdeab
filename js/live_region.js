// The monitor panel's one live region (anywidget AFM): a node that stays in place while its text changes,
// so screen readers announce each change (a re-rendered HTML output would replace its node every refresh
// and may never be read). Once the kernel following a running job is gone it says so, the job's status
// line stops claiming a live status, and the button row it sits in becomes a static copy. It tells the kernel
// whether the row holds the keyboard focus: a row that is over but kept for that focus is released once the
// focus has left it.

import { FREEZE, notebookOf, rewriteOutputs, whenKernelGone } from "./kernel_gone.js";

const LAST_SEEN = "unknown (last seen ";

/**
 * The job's status line in `root` (a page or a parsed output) no longer claims a live status and an ETA;
 * returns whether anything changed (a line said so already is left as it is).
 */
function staleStatus(root, jobId) {
  let changed = false;
  for (const monitor of root.querySelectorAll(".synth-monitor")) {
    const status = monitor.querySelector(".synth-status");
    if (monitor.getAttribute("data-job-id") !== jobId || !status || status.textContent.startsWith(LAST_SEEN)) continue;
    for (const eta of monitor.querySelectorAll(".synth-eta")) eta.remove();
    status.textContent = `${LAST_SEEN}${status.textContent.trim()})`;
    changed = true;
  }
  return changed;
}

/** The data of a status output of the job once its kernel is gone; null for any other output. */
function staleStatusData(data, jobId) {
  const join = (value) => (Array.isArray(value) ? value.join("") : value);
  const html = join(data["text/html"]);
  if (typeof html !== "string" || !html.includes("synth-monitor") || !html.includes(jobId)) return null;
  const parsed = document.createElement("template");
  parsed.innerHTML = html;
  if (!staleStatus(parsed.content, jobId)) return null;
  const text = String(join(data["text/plain"]) || "").replace(/status=(\S+)/, `status=${LAST_SEEN}$1)`)
    .replace(/ · ETA [^\n]*/, "");
  return { ...data, "text/html": parsed.innerHTML, "text/plain": text };
}

/** Says it on the page and in the notebook, so that a notebook saved now says it too. */
function markStatusStale(el, model) {
  const jobId = model.get("job_id");
  staleStatus(el.closest(".jp-OutputArea") || document, jobId);
  const notebook = notebookOf(model);
  if (notebook) rewriteOutputs(notebook, (data) => staleStatusData(data, jobId));
}

/**
 * Tell the kernel whether the keyboard focus is in the row (``{event: "focus", held}``, on each change), so that
 * a row whose job ends while it holds the focus is kept until the focus leaves it, and, once the row is over
 * (`release_when_unfocused`), say "unfocused" as soon as none of its controls holds the focus: it is then
 * replaced by static text without dropping a focus to the page. A focus lost to another window does not
 * count: the row waits until the page has the focus elsewhere.
 */
function reportFocus(model, el) {
  let row = null;
  let held = false;
  let sent = false;
  const check = () => {
    if (!row.isConnected) return;
    const now = row.contains(document.activeElement);
    if (now !== held) {
      held = now;
      model.send({ event: "focus", held });
    }
    if (sent || held || !model.get("release_when_unfocused") || !document.hasFocus()) return;
    sent = true;
    model.send({ event: "unfocused" });
  };
  const later = () => setTimeout(check, 0); // focusout fires before the focus lands on the next element
  let pending = 0;
  const attach = () => {
    if (!el.isConnected) { pending = requestAnimationFrame(attach); return; }
    row = el.closest(".synth-controls") || el;
    row.addEventListener("focusin", check);
    row.addEventListener("focusout", later);
    window.addEventListener("focus", later);
    check();
  };
  const onChange = () => { if (row) check(); };
  model.on("change:release_when_unfocused", onChange);
  attach();
  return () => {
    cancelAnimationFrame(pending);
    model.off("change:release_when_unfocused", onChange);
    if (row) {
      row.removeEventListener("focusin", check);
      row.removeEventListener("focusout", later);
    }
    window.removeEventListener("focus", later);
  };
}

function render({ model, el }) {
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
    markStatusStale(el, model);
  }, model, FREEZE); // the row's one view that puts its static copy in place
  const unreport = reportFocus(model, el);
  return () => {
    model.off("change:value", sync);
    unwatch();
    unreport();
  };
}

export default { render };
