"""Every Job ``%synth_train`` hands back stays usable in later cells of the same kernel.

Polling or not, one config or several, wizard or ``--yes``, and ``--attach``: each returned job can
``wait()``, ``cancel()``, ``refresh()`` and give its DataFrames on the kernel's loop (here: the test's
running loop, the way a cell runs inside ipykernel's loop). A job whose client was closed on purpose says
how to get a live handle instead of leaking httpx's RuntimeError.

The backend is the real embedded one with the replay executor (recorded streams, no model).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wizard_support import CANARY_PASTED, clean_environ

from synth_nb import pipeline
from synth_nb.errors import ClientClosedError


def _replay_backend(speed: float) -> Iterator[Any]:
    from synth_nb.local import start_backend

    backend = start_backend(default_executor="replay", executor_options={"replay": {"speed": speed}})
    pipeline.use_local_backend(backend)
    yield backend
    pipeline.stop_local_backend()


@pytest.fixture
def backend() -> Iterator[Any]:
    """Replays finish in seconds."""
    yield from _replay_backend(50)


@pytest.fixture
def slow_backend() -> Iterator[Any]:
    """Replays at a tenth of the recorded speed: minutes, so a job is still running when cancelled."""
    yield from _replay_backend(0.1)


async def _assert_usable(job: Any) -> None:
    """What a later cell does with a finished job: refresh, wait, cancel (a no-op now), read DataFrames."""
    await job.refresh()
    assert await job.wait(timeout=120) == "succeeded"
    assert await job.cancel() == "succeeded"  # already terminal: nothing is sent, the status is kept
    assert len(job.events_df()) == len(job.events) > 0
    assert len(job.metrics_df()) == len(job.metrics)


async def test_no_poll_returns_a_live_job_that_can_be_waited_for_later(ip: Any, project: Path, backend: Any,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --no-poll")
    assert not job.done
    await _assert_usable(job)
    capsys.readouterr()


async def test_no_poll_with_several_configs_returns_live_jobs(ip: Any, project: Path, backend: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    jobs = ip.run_line_magic("synth_train", "-c sft.toml -c gepa.toml --backend local --yes --no-poll")
    assert [j.flow for j in jobs] == ["sft", "prompt_learning"]
    for job in jobs:
        await _assert_usable(job)
    capsys.readouterr()


async def test_no_poll_job_can_be_cancelled_from_a_later_cell(ip: Any, project: Path, slow_backend: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --no-poll")
    await job.refresh()
    assert job.status in ("queued", "running")
    assert await job.cancel(timeout=60) == "cancelled"
    assert job.status == "cancelled"
    capsys.readouterr()


async def test_a_waited_job_is_moved_to_the_kernel_loop_afterwards(ip: Any, project: Path, backend: Any,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes")  # headless: blocks
    assert job.done and job.status == "succeeded"
    await _assert_usable(job)
    capsys.readouterr()


async def test_with_a_widget_front_end_the_job_follows_on_the_kernel_loop(
        ip: Any, project: Path, backend: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "1")
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes")  # returns at once
    await _assert_usable(job)
    capsys.readouterr()


async def test_attach_returns_a_live_job_even_without_backend_flag(ip: Any, project: Path, backend: Any,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    first = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes")
    # the registry remembers the embedded backend's URL; its own key is used, not the .env's SYNTH_API_KEY
    job = ip.run_line_magic("synth_train", f"--attach {first.id}")
    assert job.id == first.id and job.status == "succeeded"
    await _assert_usable(job)
    capsys.readouterr()


async def test_wizard_jobs_can_be_waited_for_cancelled_and_refreshed(project: Path, slow_backend: Any) -> None:
    from synth_nb.notebook.wizard import Wizard

    handed: list[Any] = []
    wizard = Wizard(project, preselect=[project / "sft.toml"], backend="local", environ=clean_environ(),
                    on_submitted=handed.append)
    assert wizard.can_submit, wizard.blockers
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    (job,) = await wizard.submit_task
    assert handed == [[job]] and wizard.submit_error == ""
    await job.refresh()
    assert await job.cancel(timeout=60) == "cancelled"
    assert await job.wait(timeout=60) == "cancelled"
    assert len(job.events_df()) == len(job.events)


async def test_a_pasted_synth_key_never_replaces_the_embedded_backends_own(project: Path, backend: Any) -> None:
    """A SYNTH_API_KEY pasted in the wizard (or found in .env) is for the hosted backend: sending it to the
    embedded one used to fail with "HTTP 401: missing or invalid API key"."""
    from synth_nb.notebook.wizard import Wizard

    wizard = Wizard(project, preselect=[project / "sft.toml"], backend="local", environ=clean_environ(),
                    on_submitted=lambda jobs: None)
    wizard._handle_custom_msg({"type": "paste_secret", "name": "SYNTH_API_KEY", "value": CANARY_PASTED}, [])
    row = next(r for r in wizard.secrets if r["name"] == "SYNTH_API_KEY")
    assert row["source"] == "local backend" and CANARY_PASTED[-4:] not in row["masked"]
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    (job,) = await wizard.submit_task
    assert wizard.submit_error == ""
    assert await job.wait(timeout=120) == "succeeded"


async def test_a_job_whose_client_was_closed_says_how_to_get_a_live_handle(
        ip: Any, project: Path, backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --no-poll")
    await job.client.aclose()
    for call in (job.refresh, job.wait, job.cancel):
        with pytest.raises(ClientClosedError, match=f"%synth_train --attach {job.id}"):
            await call()
    again = ip.run_line_magic("synth_train", f"--attach {job.id} --no-poll")
    assert await again.wait(timeout=120) == "succeeded"
    capsys.readouterr()
