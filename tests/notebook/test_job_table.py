"""``%synth_train --jobs``: a job whose end nobody has seen yet says so in words, never ``?``."""

from __future__ import annotations

from synth_nb.job import JobRecord
from synth_nb.notebook.job_table import NO_END_SEEN, jobs_bundle


def test_a_job_without_a_recorded_end_says_so_and_an_ended_one_shows_its_status() -> None:
    running = JobRecord(job_id="pl_run", flow="prompt_learning", backend_url="http://127.0.0.1:1/api",
                        algorithm="gepa", submitted_at="2026-01-01T00:00:00+00:00")
    done = JobRecord(job_id="sft_done", flow="sft", backend_url="http://127.0.0.1:1/api", status="succeeded",
                     submitted_at="2026-01-01T00:00:00+00:00")
    bundle = jobs_bundle([running, done])
    assert "<td>?</td>" not in bundle["text/html"] and " ? " not in bundle["text/plain"]
    assert f"<td>{NO_END_SEEN}</td>" in bundle["text/html"] and "<td>succeeded</td>" in bundle["text/html"]
    assert NO_END_SEEN in bundle["text/plain"].splitlines()[1]
