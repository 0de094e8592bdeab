"""Secrets written under names a short list of keys misses (``auth``, ``authorization``, ``api_key_header``,
``credentials``, ``bearer``) and key-shaped strings in free-text fields and comments: a ``--report-to
tensorboard,mlflow,wandb,trackio`` run of a real GEPA job on the embedded backend, its ``--dry-run`` preview and
a fork of it write bundles, summaries, TensorBoard event files, an MLflow store, W&B's offline run (its logs
too), Trackio's store, a forked config and the job's report.html; not one of the files written, nor anything
printed, holds a canary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA

from synth_nb.cli.main import main

#: one canary per way a secret hides in a config, each unique, so a hit names the path it took
CANARIES = {
    "auth": "Bearer CANARYauth0123456789abcdefXYZ",
    "authorization": "Basic Q0FOQVJZYXV0aG9yaXphdGlvbjAxMjM0NTY3",
    "api_key_header": "CANARYheaderKey9f8e7d6c5b4a3f2e1d",
    "credentials": "CANARYcred:hunter2-horse-battery",
    "bearer": "CANARYbearerTok_55aa66bb77cc88dd",
    "password": "CANARYpw-correct-horse",
    "inline_auth": "CANARYinlineTable-plain",
    "free_text_sk": "sk-proj-CANARYfreetext0123456789abcdef",
    "free_text_bearer": "Bearer CANARYinline0123456789abcdefghij",
    "comment": "sk_live_CANARYcomment0123456789",
}


def _needle(value: str) -> str:
    """The part of a canary that is its secret (past an auth scheme), which no file may hold."""
    return value.split()[-1][:18]


def _config(task_url: str) -> str:
    c = CANARIES
    return LOCAL_GEPA.format(task_url=task_url, budget=16) + f"""
[prompt_learning.policy.headers]
auth = "{c["auth"]}"
authorization = "{c["authorization"]}"
api_key_header = "{c["api_key_header"]}"

[prompt_learning.extras]
credentials = "{c["credentials"]}"
bearer = "{c["bearer"]}"
password = "{c["password"]}"
proxy = {{ auth = "{c["inline_auth"]}", host = "proxy.example.com" }}
notes = "ask with {c["free_text_sk"]} if the default fails"  # or {c["comment"]}
curl = "curl -H 'Authorization: {c["free_text_bearer"]}' http://x"
"""


def _hits(root: Path, skip: set[Path]) -> dict[str, list[str]]:
    """canary name -> the files under ``root`` (but ``skip``) holding it."""
    hits: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p not in skip):
        data = path.read_bytes()
        for name, value in CANARIES.items():
            if _needle(value).encode() in data:
                hits.setdefault(name, []).append(str(path.relative_to(root)))
    return hits


def test_no_file_of_a_reported_run_holds_a_secret(folder: Path, backend: Any, task_app: Any, trackio_store: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the default store: runs/mlflow.db, in the folder
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    config = folder / "gepa.toml"
    config.write_text(_config(task_app.url))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--dry-run"]) == 0
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--dry-run", "--json"]) == 0
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--report-to",
                 "tensorboard,mlflow,wandb,trackio"]) == 0
    printed = capsys.readouterr()
    job_id = printed.out.split("submitted prompt_learning job ", 1)[1].split()[0]
    config.write_text(config.read_text() + "\n# changed since: the fork starts from the bundled copy\n")
    assert main(["train", "--fork", job_id]) == 0
    printed_fork = capsys.readouterr()

    written = [p for p in folder.rglob("*") if p.is_file() and p != config]
    assert any(p.name == "mlflow.db" for p in written) and any("tfevents" in p.name for p in written)
    assert any(p.name == "plan.json" for p in written) and any(".fork-" in p.name for p in written)
    assert any(p.name == "report.html" for p in written)  # the job's report shows its config and plan
    assert any(p.suffix == ".wandb" for p in written) and list(trackio_store.glob("*.db"))
    assert _hits(folder, {config}) == {}
    assert _hits(trackio_store, set()) == {}
    out = printed.out + printed.err + printed_fork.out + printed_fork.err
    assert [name for name, value in CANARIES.items() if _needle(value) in out] == [], \
        [line for line in out.splitlines() if "CANARY" in line]
    # the embedded backend's database keeps every value under a secret's name withheld (free text is the
    # user's prompt, which a backend is sent and keeps: there, the shape rules are the client's alone)
    named = {name for name in CANARIES if not name.startswith(("free_text", "comment"))}
    stored = _hits(Path(backend.data_dir), set())
    assert {name: files for name, files in stored.items() if name in named} == {}
    hosts = [json.loads(p.read_text())["steps"] for p in written if p.name == "plan.json"]
    assert "proxy.example.com" in json.dumps(hosts)  # only secrets are masked: the rest of the config is kept
