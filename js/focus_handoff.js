// A view that holds the keyboard focus and is replaced by static output (the wizard, by what it sent once it
// submits) leaves the focus on the page's body: a keyboard user would have to find their place again.

const WAIT_MS = 15000;
const STEP_MS = 100;

/**
 * Watch whether `el` holds the focus; the returned function (call it when the view is removed) moves a
 * focus the removal dropped to the first enabled button of the cell's newest panel row (the submitted job's
 * Cancel), once that row has rendered, else to what replaced the view. Nothing moves when the user has put
 * the focus somewhere since.
 */
export function handFocusOnRemoval(el, wanted = () => true) {
  let cell = null;
  let held = false;
  const focusIn = () => {
    held = true;
    cell = el.closest(".jp-Cell") || el.closest(".jp-OutputArea") || cell;
  };
  const focusOut = (event) => {
    if (event.relatedTarget && !el.contains(event.relatedTarget)) held = false;
  };
  el.addEventListener("focusin", focusIn);
  el.addEventListener("focusout", focusOut);
  return () => {
    el.removeEventListener("focusin", focusIn);
    el.removeEventListener("focusout", focusOut);
    if (!held || !cell || !wanted()) return;
    const dropped = () => !document.activeElement || document.activeElement === document.body;
    const started = Date.now();
    // a job that ended at once leaves its row as text: the focus then stays where the wizard was, on the
    // "What was sent" disclosure of what replaced it
    const sent = () => cell.querySelector(".synth-submitted summary");
    const look = () => {
      if (!dropped() || !cell.isConnected) return;
      const rows = cell.querySelectorAll(".synth-controls");
      const ended = !rows.length && cell.querySelector(".synth-controls-snapshot");
      const target = rows.length ? rows[0].querySelector("button:not([disabled])") : ended ? sent() : null;
      if (target) target.focus();
      else if (Date.now() - started < WAIT_MS) setTimeout(look, STEP_MS);
      else sent()?.focus();
    };
    look();
  };
}
