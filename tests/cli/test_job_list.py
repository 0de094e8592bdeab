"""``synth-nb jobs`` and ``%synth_train --jobs`` give one answer (``actions.jobs``): a job sent with ``--no-poll``
to the embedded backend, which ended while nobody followed it and whose backend restarted on another port
since, is listed as it ended, with its last event, on both doors, and remembered for the next listing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import LOCAL_GEPA
from shared_fixtures import run_magic

from synth_nb.cli.main import main
from synth_nb.job import JobRegistry
from synth_nb.pipeline import stop_local_backend, use_local_backend

API_KEY = "sk_local_job_list_0123456789abcdef"


def _status(backend: Any, job_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs/{job_id}",
                       headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30)
    answer.raise_for_status()
    return dict(answer.json())


@pytest.fixture()
def ended_elsewhere(folder: Path, task_app: Any, backend_options: dict[str, Any], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[str, Any]]:
    """``(job id, the backend now running)``: a GEPA job sent with ``--no-poll`` to the embedded backend, ended
    unfollowed; then that backend stopped and started again, on the same data, on another port."""
    from synth_nb.local import start_backend

    data = tmp_path / "backend-data"
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    first = start_backend(port=0, data_dir=data, api_key=API_KEY, **backend_options)
    use_local_backend(first)
    try:
        assert main(["train", "-c", "gepa.toml", "--backend", "local", "--no-poll"]) == 0
        job_id = capsys.readouterr().out.strip().splitlines()[-1]
        deadline = time.monotonic() + 300
        while _status(first, job_id)["status"] != "succeeded":
            assert time.monotonic() < deadline, "the job did not end"
            time.sleep(0.2)
        first.stop()
        with start_backend(port=0, data_dir=data, api_key=API_KEY, **backend_options) as restarted:
            use_local_backend(restarted)
            yield job_id, restarted
    finally:
        stop_local_backend()


def _unfollowed(folder: Path, job_id: str) -> None:
    """The job's record as ``--no-poll`` leaves it: no status, no event seen."""
    registry = JobRegistry(folder)
    registry.update(job_id, status=None, last_seq=0)
    record = registry.get(job_id)
    assert record is not None and record.embedded


@pytest.mark.parametrize("door", ["synth-nb jobs", "%synth_train --jobs"])
def test_both_doors_list_a_job_as_it_ended_on_the_backend_now_running(
        door: str, folder: Path, ended_elsewhere: tuple[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    job_id, restarted = ended_elsewhere
    _unfollowed(folder, job_id)
    last_seq = _status(restarted, job_id)["last_seq"]
    # why it stopped, read from its events by the listing (nobody followed it): the search's budget ran out
    reason = "succeeded: the search used its rollout budget (budget_exhausted: "
    if door == "synth-nb jobs":
        assert main(["jobs"]) == 0
        out = capsys.readouterr().out
        head, *_ = out.splitlines()
        (row,) = [line for line in out.splitlines() if line.startswith(job_id)]
        assert " succeeded " in row and "recorded" not in row and f" {last_seq} " in row
        assert "STOPPED" in head and reason in row and head.index("STOPPED") == row.index(reason), out
    else:
        table = run_magic(folder, "--jobs", "jobs.ipynb")
        bundle = table._repr_mimebundle_()
        (row,) = [line for line in bundle["text/plain"].splitlines() if line.startswith(job_id)]
        assert "  succeeded  " in row and "recorded" not in row and reason in row
        assert "<th scope='col'>stopped</th>" in bundle["text/html"] and reason in bundle["text/html"]
    recorded = JobRegistry(folder).get(job_id)  # remembered for the next listing
    assert recorded is not None and (recorded.status, recorded.last_seq) == ("succeeded", last_seq)
    assert recorded.stop_reason is not None and recorded.stop_reason.startswith(reason)
