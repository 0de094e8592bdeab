"""Storage: per-job monotonic seq under concurrent writers, and history that survives a crashed server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from local_backend_helpers import RUN_CLI, replay_body

from synth_nb.local import start_backend
from synth_nb.local.storage import Storage

KEY = "sk_local_crash_test_key_0042"


def test_concurrent_writers_get_unique_consecutive_seqs(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    storage.create_job("job_a", "sft", "replay", {})
    threads = [threading.Thread(target=lambda: [storage.add_event("job_a", "t", "m") for _ in range(50)])
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seqs = [e["seq"] for e in storage.events("job_a", 0, 10_000)]
    assert seqs == list(range(1, 402))  # creation event + 8 * 50
    storage.close()


def test_history_survives_a_killed_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    proc = subprocess.Popen([sys.executable, "-c", RUN_CLI, "--port", "0", "--data-dir", str(data_dir),
                             "--api-key", KEY], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" on ")[1].split()[0]
        with httpx.Client(base_url=url + "/api", headers={"Authorization": f"Bearer {KEY}"},
                          trust_env=False) as client:
            job = client.post("/learning/jobs", json=replay_body("sft", speed=1, auto_start=True)).json()["job_id"]
            while len(client.get(f"/learning/jobs/{job}/events").json()["events"]) < 5:
                time.sleep(0.05)
            before = client.get(f"/learning/jobs/{job}/events").json()["events"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    with start_backend(data_dir=data_dir, api_key=KEY) as backend, httpx.Client(
            base_url=backend.url + "/api", headers={"Authorization": f"Bearer {KEY}"}, trust_env=False) as client:
        doc = client.get(f"/learning/jobs/{job}").json()
        assert doc["status"] == "failed" and "backend stopped while this job was running" in doc["error"]
        after = client.get(f"/learning/jobs/{job}/events", params={"limit": 1000}).json()["events"]
        assert after[:len(before)] == before
        assert after[-1]["type"] == "sft.job.failed" and after[-1]["data"]["error"] == "backend_restarted"
        assert [e["seq"] for e in after] == list(range(1, len(after) + 1))
        assert [t["phase"] for t in client.get(f"/learning/jobs/{job}/timeline").json()["events"]][-1] == "failed"


def test_a_database_from_before_upload_idempotency_gains_it_when_opened(tmp_path: Path) -> None:
    import sqlite3

    with sqlite3.connect(tmp_path / "backend.sqlite3") as db:  # the files table as the first release wrote it
        db.execute("CREATE TABLE files (id TEXT PRIMARY KEY, filename TEXT NOT NULL, purpose TEXT NOT NULL, "
                   "bytes INTEGER NOT NULL, stored_name TEXT NOT NULL, created_at TEXT NOT NULL)")
        db.execute("INSERT INTO files VALUES ('file_old', 'a.jsonl', 'fine-tune', 3, 'file_old.bin', "
                   "'2026-01-01T00:00:00.000000Z')")
    storage = Storage(tmp_path)
    first, created = storage.add_file("file_new", "b.jsonl", "fine-tune", 4, "file_new.bin", "key-1")
    again, created_again = storage.add_file("file_dup", "b.jsonl", "fine-tune", 4, "file_dup.bin", "key-1")
    old = storage.get_file("file_old")
    storage.close()
    assert created and not created_again and again["id"] == first["id"] == "file_new"
    assert old is not None and old["idempotency_key"] is None


def test_metric_pages_are_the_same_for_rows_stored_before_records_were_kept(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    try:
        storage.create_job("job_m", "rl", "replay", {})
        for step in range(5):
            storage.add_metric("job_m", "train.loss", step, 1.0 / (step + 1), {"step": step})
            storage.add_metric("job_m", "train.reward", step, float("inf") if step == 4 else step / 4)
        fresh = storage.metrics_json("job_m", after_step=1, limit=5), storage.metrics_json("job_m", limit=3)
        storage._db.execute("UPDATE metrics SET record=NULL WHERE step % 2 = 0")  # as an older version wrote them
        assert (storage.metrics_json("job_m", after_step=1, limit=5), storage.metrics_json("job_m", limit=3)) == fresh
        points = json.loads(fresh[0])
        assert [(p["name"], p["step"]) for p in points] == [("train.loss", 2), ("train.reward", 2), ("train.loss", 3),
                                                           ("train.reward", 3), ("train.loss", 4)]
        assert json.loads(fresh[1])[-1]["value"] == "inf"
    finally:
        storage.close()


def test_event_pages_are_the_same_for_rows_stored_before_records_were_kept(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    try:
        storage.create_job("job_e", "rl", "replay", {})
        for step in range(6):
            storage.add_event("job_e", "rl.train.step", f"step {step}", {"step": step, "text": "é\n"})
        fresh = storage.event_records("job_e", 2, 3)
        storage._db.execute("UPDATE events SET record=NULL WHERE seq % 2 = 0")  # as an older version wrote them
        assert storage.event_records("job_e", 2, 3) == fresh
        assert [e["data"]["step"] for e in storage.events("job_e", 2, 3)] == [1, 2, 3]
    finally:
        storage.close()
