"""Show monitor panels for jobs, and block the cell until they end when asked (``show_job``, ``show_jobs``).

Blocking is the part with rules: where a job's monitoring can run while the calling thread waits.
``submitted_bundle`` is what a wizard leaves in place of its widget once it submitted.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from synth_nb.job import JobView
from synth_nb.notebook.blocking import block_on, running_loop
from synth_nb.notebook.kernel_loop import KernelLoop
from synth_nb.notebook.panel import MonitorPanel

__all__ = ["show_job", "show_jobs", "submitted_bundle"]


def submitted_bundle(submitted: Sequence[dict[str, str]], destination: str, sent: str = "") -> dict[str, str]:
    """What a wizard leaves once it submitted: ``[{job_id, flow, path}]`` sent to ``destination`` (a masked
    URL), the masked payload preview ``sent`` folded, and the commands that send one again or change it first."""
    jobs = "job" if len(submitted) == 1 else "jobs"
    head = f"Submitted {len(submitted)} {jobs} to {destination}"
    items = [(s["path"], s["flow"], s["job_id"]) for s in submitted]
    example = items[0][2] if len(items) == 1 else "JOB_ID"
    rerun, fork = f"%synth_train --rerun {example}", f"%synth_train --fork {example}"
    again = f"To send it again: {rerun}; to change something first: {fork} (a wizard starting from that job)."
    again_html = (f"To send it again: <code>{html.escape(rerun)}</code>; to change something first: "
                  f"<code>{html.escape(fork)}</code> (a wizard starting from that job).")
    text = "\n".join([head + ":", *(f"  {path} ({flow}) → {job_id}" for path, flow, job_id in items), again])
    rows = "".join(f"<li><code>{html.escape(path)}</code> ({html.escape(flow)}) → <strong class='synth-job-id'>"
                   f"{html.escape(job_id)}</strong></li>" for path, flow, job_id in items)
    payloads = (f"<details><summary>What was sent (secrets masked)</summary><pre>{html.escape(sent)}</pre></details>"
                if sent else "")
    return {"text/html": f"<div class='synth-wizard-snapshot synth-submitted' data-testid='submitted'>"
                         f"<p>{html.escape(head)}:</p><ul>{rows}</ul>{payloads}<p>{again_html}</p></div>",
            "text/plain": text + (f"\n{sent}" if sent else "")}


def show_job(job: JobView, *, wait: bool = False, timeout: float | None = None, **options: Any) -> MonitorPanel:
    """Show the monitor panel for ``job``; with ``wait=True`` block until the job is terminal.

    ``timeout`` (seconds) bounds the blocking wait: the panel then stops watching (the job keeps running
    on the backend) and ``JobTimeoutError`` says how to re-attach.

    Blocking needs the job's monitoring to run somewhere other than the calling thread's loop: a job
    whose client works on another loop (``job.loop``, e.g. the magic's background loop) is followed
    there, a fresh job in plain Python on a private loop; a job that lives on the calling cell's own loop
    cannot be blocked on, so its panel goes live and the cell should ``await panel``.
    """
    return show_jobs([job], wait=wait, timeout=timeout, **options)[0]


def show_jobs(jobs: Sequence[JobView], *, wait: bool = False, timeout: float | None = None,
              cancel_on_interrupt: bool = True, **options: Any) -> list[MonitorPanel]:
    """One panel per job, all displayed first; with ``wait=True`` block until every job is terminal.

    ``timeout`` bounds the blocking wait for each job (see :func:`show_job`); one ``JobTimeoutError``
    names every job still running when it expires.

    Interrupting the wait (Ctrl-C / the stop button) sends the backend cancel for each unfinished job
    and waits for the confirmed terminal states; with ``cancel_on_interrupt=False`` (jobs re-attached to,
    not created here) it only stops watching.
    """
    panels = [MonitorPanel(job, **options) for job in jobs]
    if not wait:
        return [panel.display() for panel in panels]
    running = running_loop()
    blocking: list[MonitorPanel] = []
    for panel in panels:
        job_loop = panel.job.loop
        if running is not None and (job_loop is None or job_loop is running):
            panel.note = "live; add `await panel` (or `await job.wait()`) to block this cell until the end"
            panel.display()
        else:
            panel.display(start=False)
            blocking.append(panel)
    futures = [panel.watch_on(panel.job.loop or KernelLoop.capture().loop, timeout) for panel in blocking]
    block_on(blocking, futures, cancel_on_interrupt=cancel_on_interrupt)
    return panels
