"""``synth-nb model-server``: a real ``transformers serve`` on 127.0.0.1 for a model already on disk.

The served model is a small Llama built in the test (quick to load), so the command, the readiness check, a
chat completion and the stop by PID are all real; the bundled SmolLM2 GGUF is served in the prompt-learning
tests. What cannot be produced on demand (a missing package) is checked on the one line the user reads.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from tiny_hf_model import cache_entry, save_tiny_chat_model

from synth_nb.local import model_server
from synth_nb.local.errors import ModelServerError
from synth_nb.local.model_server import explain_exit, resolve_served_model, serving_missing

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "synth_nb.cli.main", "model-server", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


@pytest.mark.torch
@pytest.mark.real_llm
def test_the_command_serves_a_model_folder_until_ctrl_c_and_stops_the_server_by_pid(tmp_path: Path) -> None:
    folder = save_tiny_chat_model(tmp_path / "tiny-chat")
    cli = _cli(str(folder), "--threads", "1")
    lines: list[str] = []
    try:
        assert cli.stdout is not None
        deadline = time.monotonic() + 600  # a guard on a loaded machine, not a speed assertion
        while time.monotonic() < deadline:
            line = cli.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Ctrl-C to stop"):
                break
        said = "".join(lines)
        ready = re.search(r"model server ready: (http://127\.0\.0\.1:\d+) \(pid (\d+)", said)
        assert ready, said
        url, pid = ready.group(1), int(ready.group(2))
        model_id = re.search(r'"model": "([^"]+)"', said)
        assert model_id and model_id.group(1) == str(folder.resolve())
        answer = httpx.post(url + "/v1/chat/completions", timeout=120, json={
            "model": model_id.group(1), "messages": [{"role": "user", "content": "Capital of Peru?"}],
            "max_tokens": 4, "temperature": 0})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["choices"][0]["message"]["role"] == "assistant"
        assert body["usage"]["prompt_tokens"] > 0 and 0 < body["usage"]["completion_tokens"] <= 4
    finally:
        cli.send_signal(signal.SIGINT)
        out, _ = cli.communicate(timeout=60)
    assert cli.returncode == 0, out
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_missing_file_or_model_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    for args, said in (([str(tmp_path / "absent.gguf")], "does not exist"),
                       (["--gguf", str(tmp_path / "absent.gguf")], "does not exist"),
                       (["owner/not-cached-model"], "is not in the Hugging Face cache")):
        cli = _cli(*args)
        out, _ = cli.communicate(timeout=120)
        assert cli.returncode == 2 and said in out, out
        assert out.count("\n") == 1 and "Traceback" not in out


def test_models_resolve_to_what_transformers_serve_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smollm2 = resolve_served_model("smollm2")
    folder, _, file_name = smollm2.target.rpartition(":")
    assert smollm2.gguf and file_name == "SmolLM2-135M-Instruct.Q4_1.gguf" and (Path(folder) / file_name).is_file()
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_served_model(str(gguf)).target == f"{tmp_path.resolve()}:m.gguf"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    snapshot = cache_entry(tmp_path / "hf", "org/cached")
    cached = resolve_served_model("org/cached")
    assert cached.target == str(snapshot) and not cached.gguf and "Hugging Face cache" in cached.source
    with pytest.raises(ModelServerError, match="not a model folder"):
        resolve_served_model(str(tmp_path))


def test_what_to_install_is_named_when_the_server_cannot_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a missing package cannot be produced on demand in this venv: the lookup says gguf is absent
    real = model_server.importlib.util.find_spec
    monkeypatch.setattr(model_server.importlib.util, "find_spec", lambda name: None if name == "gguf" else real(name))
    said = serving_missing(gguf=True)
    assert said is not None and "gguf" in said and "pip install 'synth-nb[real-llm]'" in said and "\n" not in said
    assert serving_missing(gguf=False) is None
    tail = ["Traceback (most recent call last):", "ModuleNotFoundError: No module named 'gguf'"]
    assert "pip install" in explain_exit(tail, 1, tmp_path / "server.log")
