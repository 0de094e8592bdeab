"""A stale ``backend.json`` names a port another program may listen on now (the backend was killed without
cleaning up and its pid was given to a live process): the folder's key is never sent there, and the keys
are replaced, since an older client may have sent them."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from synth_nb.cli.backend import main as backend_main
from synth_nb.local.backend_info import INFO_FILE
from synth_nb.local.key_files import key_proof
from synth_nb.local.shared import find_backend, stop_backend

OLD_KEY = "sk_local_CANARY_stale_0123456789abcdef0123456789"


class Impostor(BaseHTTPRequestHandler):
    """Answers every GET as a synth-nb backend would, and records the headers it was sent."""

    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        Impostor.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps({"service": "synth-nb-local-backend", "pid": os.getpid(),
                           "proof": key_proof("sk_local_guess", "0" * 32, "x")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def impostor() -> Iterator[str]:
    Impostor.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Impostor)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def _stale_folder(tmp_path: Path, url: str) -> Path:
    folder = tmp_path / "backend"
    folder.mkdir(parents=True)
    (folder / "api_key").write_text(OLD_KEY + "\n")
    (folder / INFO_FILE).write_text(json.dumps({"url": url, "pid": os.getpid(), "version": "0",
                                                "started_at": "2026-01-01T00:00:00+00:00",
                                                "data_dir": str(folder)}))
    return folder


def test_status_sends_no_key_to_a_foreign_listener_on_the_recorded_port(
        tmp_path: Path, impostor: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _stale_folder(tmp_path, impostor)
    assert backend_main(["--status", "--data-dir", str(folder)]) == 1
    assert "no embedded backend is running" in capsys.readouterr().out
    assert Impostor.seen, "the listener was asked to prove the key"
    assert all("authorization" not in h and "x-api-key" not in h for h in Impostor.seen), Impostor.seen
    assert OLD_KEY not in json.dumps(Impostor.seen)
    assert not (folder / INFO_FILE).exists()
    new_key = (folder / "api_key").read_text().strip()
    assert new_key.startswith("sk_local_") and new_key != OLD_KEY  # the key the stale file went with is retired
    assert oct((folder / "api_key").stat().st_mode & 0o777) == "0o600"


def test_discovery_and_stop_send_no_key_either(tmp_path: Path, impostor: str) -> None:
    folder = _stale_folder(tmp_path, impostor)
    assert find_backend(folder) is None
    folder2 = _stale_folder(tmp_path / "two", impostor)
    assert stop_backend(folder2) is None  # and this process (the pid in the file) lives on
    assert all("authorization" not in h for h in Impostor.seen)
    assert (folder2 / "api_key").read_text().strip() != OLD_KEY
