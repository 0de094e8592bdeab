"""The report's final block: what the terminal prints when following a job ends, as a table.

The same facts as ``synth-nb train`` / ``attach``'s final block, read from the same places: the counts, the
phases of the job's timeline, each metric's last value, the backend's fine-tuned model and error, the job its
status links to, what could not be read, and where its files are. How it ended (stop reason, estimate) has
its own sections.
"""

from __future__ import annotations

from synth_nb.flows.artifacts import unreadable_metrics, unreadable_metrics_note
from synth_nb.job.describe import latest_metrics, linked_summary, linked_unfollowable, phases_line
from synth_nb.job.report_html._base import REPORT_FILE, ReportSource, Section, grid_table, rows_table
from synth_nb.records import UNPARSED_EVENT_TYPE

__all__ = ["final_section"]


def final_section(source: ReportSource) -> Section:
    job = source.job
    doc = job.status_doc or {}
    rows = [("Final status", str(job.status)), ("Events", f"{len(job.events):,}"),
            ("Metric points", f"{len(job.metrics):,}")]
    phases = phases_line(getattr(job, "timeline", ()), arrow="→")
    if phases:
        rows.append(("Phases", phases))
    rows += [(key.replace("_", " ").capitalize(), str(doc[key])) for key in ("fine_tuned_model", "error")
             if doc.get(key) not in (None, "")]
    unparsed = sum(1 for e in job.events if e.type == UNPARSED_EVENT_TYPE)
    if unparsed:
        rows.append(("Not interpreted", f"{unparsed} item(s) the backend sent could not be interpreted; they are "
                                        f"kept as '{UNPARSED_EVENT_TYPE}' events (job.events)"))
    unreadable = unreadable_metrics_note(unreadable_metrics(job))
    if unreadable:
        rows.append(("Unreadable metrics", unreadable))
    note, linked = getattr(job, "linked_note", None), getattr(job, "linked", None)
    if note is not None:
        rows.append(("Linked job", linked_summary(linked, "synth-nb attach") if linked is not None
                     else linked_unfollowable(note)))
    if source.folder is not None:
        rows.append(("Files", f"{source.folder}/ (this report is its {REPORT_FILE})"))
    body = rows_table(rows)
    latest = latest_metrics(job.metrics)
    if latest:
        body += grid_table(["Metric", "Step", "Last value"], [(p.name, p.step, f"{p.value:.4f}") for p in latest],
                           "Each metric's last value")
    return Section("final", "Final block", body)
