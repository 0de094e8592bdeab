// Both widgets' views learn that their kernel is gone the way ipywidgets tells them: it marks every view's
// element disconnected on a kernel restart, shutdown or crash.
const DISCONNECTED = "jupyter-widgets-disconnected";

/**
 * Call `gone` once the kernel behind this view is gone: ipywidgets then marks views disconnected (a kernel
 * restart, shutdown or crash); inside a box only the box's element may get the mark, so the view's
 * element and its ancestors up to the output are watched, from when the view is attached. An anywidget
 * view is not marked itself: its model's `comm_live_update` (the model going offline) says it instead.
 * Returns a function that stops watching.
 */
export function whenKernelGone(el, gone, model) {
  let fired = false;
  let pending = 0;
  const check = () => {
    if (fired || !el.closest(`.${DISCONNECTED}`)) return;
    fired = true;
    gone();
  };
  const observer = new MutationObserver(check);
  const watch = () => {
    if (!el.isConnected) { pending = requestAnimationFrame(watch); return; }
    for (let n = el; n && n !== document.body; n = n.parentElement) {
      observer.observe(n, { attributes: true, attributeFilter: ["class"] });
      if (n.classList.contains("jp-OutputArea-output")) break;
    }
    check();
  };
  const offline = () => {
    if (fired) return;
    fired = true;
    gone();
  };
  if (model) model.on("comm_live_update", offline);
  watch();
  return () => {
    cancelAnimationFrame(pending);
    observer.disconnect();
    if (model) model.off("comm_live_update", offline);
  };
}
