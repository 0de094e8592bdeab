"""Interrupting a cell blocked on ``%synth_train --attach`` only stops watching: the job keeps running, the
cell says how to cancel it and returns the job.

A real kernel (jupyter_client) runs the magic headless against the in-test backend (``fake_backend``, where
every job runs until cancelled); the job was created beforehand by ``synth-nb train --no-poll``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import MINIMAL_SFT

from synth_nb.cli.main import main

HANG = 120.0  # reached only when something hangs
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


def _gets(backend: Any, job_id: str) -> int:
    return sum(1 for m, path, _ in list(backend.state.requests) if m == "GET" and job_id in path)


def _cancels(backend: Any) -> int:
    return sum(1 for m, path, _ in list(backend.state.requests) if m == "POST" and path.endswith("/cancel"))


def _outputs(kc: Any, msg_id: str, *, until: str = "idle") -> str:
    """The stream and error text the cell ``msg_id`` printed until it displays something (``until="display"``:
    the job's panel) or the kernel is idle again."""
    texts: list[str] = []
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=HANG)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        content = msg["content"]
        texts.append(content.get("text", "") + content.get("ename", "") + content.get("evalue", ""))
        if until == "display" and msg["msg_type"] == "display_data":
            return "".join(texts)
        if msg["msg_type"] == "status" and content.get("execution_state") == "idle":
            return "".join(texts)
    raise AssertionError(f"the cell did not end: {''.join(texts)}")


@pytest.mark.notebook
def test_interrupting_an_attached_cell_leaves_the_job_running(fake_backend: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client.manager import start_new_kernel

    fake_backend.state.hang = True
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "train.jsonl").write_text(GOOD_LINE * 3)
    assert main(["train", "sft.toml", "--backend", fake_backend.url, "--no-poll"]) == 0
    (job_id,) = fake_backend.state.jobs
    env = {**os.environ, "SYNTH_API_KEY": fake_backend.api_key, "SYNTH_NB_WIDGETS": "0"}
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    km, kc = start_new_kernel(env=env, cwd=str(tmp_path))
    try:
        kc.execute_interactive("%load_ext synth_nb", timeout=HANG)
        msg_id = kc.execute(f"job = %synth_train --attach {job_id} --backend {fake_backend.url} --poll-interval 0.5")
        _outputs(kc, msg_id, until="display")  # the job's panel is shown: the cell now blocks on it
        seen = _gets(fake_backend, job_id)
        deadline = time.monotonic() + HANG
        while _gets(fake_backend, job_id) < seen + 2:  # and the panel follows the job
            assert time.monotonic() < deadline, "the cell never followed the job"
            time.sleep(0.05)
        km.interrupt_kernel()
        out = _outputs(kc, msg_id)
        assert f"stopped watching job {job_id}; it keeps running" in out and f"synth-nb cancel {job_id}" in out
        assert "KeyboardInterrupt" not in out and fake_backend.api_key not in out
        texts: list[str] = []
        kc.execute_interactive("print('JOB', job.id, job.done)", timeout=HANG,
                               output_hook=lambda m: texts.append(m["content"].get("text", "")))
        assert f"JOB {job_id} False" in "".join(texts)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert _cancels(fake_backend) == 0 and fake_backend.state.jobs[job_id].status == "running"
