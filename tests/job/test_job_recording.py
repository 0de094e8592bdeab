"""Recorder / read_recording: JSONL {t, kind, payload}; secrets never written."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.job import Job, Recorder, read_recording
from synth_nb.records import Event, MetricPoint

CANARY = "sk_env_canary_secret_value_9876"


def test_job_stream_is_recorded_with_secrets_masked(tmp_path: Path) -> None:
    job = Job("job_1", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("rl").endpoints)
    path = tmp_path / "rec.jsonl"
    with Recorder(path, secrets=[CANARY]) as recorder:
        recorder.follow(job)
        job.ingest_status({"status": "running", "task_app_api_key": CANARY})
        job.ingest_event(Event(seq=1, type="rl.job.created", message=f"key {CANARY}", data={"api_key": "abc"}))
        job.ingest_metric(MetricPoint(name="reward", step=1, value=0.5))
    text = path.read_text()
    assert CANARY not in text and "abc" not in text
    entries = read_recording(path)
    assert [e["kind"] for e in entries] == ["meta", "status", "event", "metric"]
    assert entries[0]["payload"]["job_id"] == "job_1"
    assert entries[2]["payload"]["seq"] == 1
    assert all(isinstance(e["t"], float | int) and e["t"] >= 0 for e in entries)


def test_bad_recording_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 0, "kind": "meta", "payload": {}}\n{"t": 1, "kind": "nope", "payload": {}}\n')
    with pytest.raises(ConfigError) as info:
        read_recording(path)
    assert info.value.line == 2 and "bad.jsonl" in str(info.value)
