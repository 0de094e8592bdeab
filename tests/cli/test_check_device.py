"""The pre-flight card says which device an SFT or RL job trains on, and never invents one.

The embedded backend answers for its own machine (``GET /v1/local-backend?device=1``); a hosted backend
chooses its hardware itself, so its card says so; a backend whose answer names no device gets "unknown".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb import pipeline
from synth_nb.cli.main import main
from synth_nb.local.examples._serve import serve_in_thread
from synth_nb.pipeline.target import Target
from synth_nb.pipeline.training_device import device_line

CONFIGS = Path(__file__).parents[2] / "example_notebooks" / "configs"
MACHINE = "— training runs on the embedded backend's machine"


def test_check_of_the_bundled_sft_config_names_the_embedded_backends_device(
        folder: Path, backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline.use_local_backend(backend)
    try:
        code = main(["train", "-c", str(CONFIGS / "sft_tiny.toml"), "--backend", "local", "--check"])
        out = capsys.readouterr().out
        assert main(["train", "-c", str(CONFIGS / "sft_tiny.toml"), "--backend", "local", "--check",
                     "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
    finally:
        pipeline.stop_local_backend()
    assert code == 0, out
    (line,) = [row for row in out.splitlines() if row.startswith("device: ")]
    # the SFT worker's own choice on this machine, with the reason; a CPU-only machine says what it lacks
    assert re.fullmatch(rf"device: (CPU \(no CUDA or MPS device\), float32|CUDA .+|Apple MPS, float32) {MACHINE}",
                        line), line
    assert doc["device"] == line


def test_the_magic_card_shows_the_device_of_an_sft_job(folder: Path, backend: Any, ip: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.utils.capture import capture_output

    ip.user_ns["__session__"] = str(folder / "check.ipynb")
    monkeypatch.setattr(ip.display_formatter, "active_types", ["text/plain", "text/html"])
    pipeline.use_local_backend(backend)
    try:
        with capture_output() as captured:
            ip.run_line_magic("synth_train", f"--config {CONFIGS / 'sft_tiny.toml'} --backend local --check")
    finally:
        pipeline.stop_local_backend()
        ip.user_ns.pop("__session__", None)
    (shown,) = captured.outputs
    page = shown.data["text/html"]
    assert "<h4 style='margin:.5em 0 .2em'>device</h4>" in page
    assert "no CUDA or MPS device), float32 — training runs on the embedded backend&#x27;s machine" in page \
        or "no CUDA or MPS device), float32 — training runs on the embedded backend's machine" in page


def test_a_hosted_backend_gets_no_invented_device() -> None:
    """Nothing is asked of a backend that is not the embedded one (nothing listens on port 9)."""
    line = device_line(Target("http://127.0.0.1:9/api"), "sk_live_device_card_0000", "sft")
    assert line == "device: chosen by the hosted backend (it does not say before a job)"


def _answer(doc: dict[str, Any]) -> Any:
    async def local_backend(request: Request) -> Response:
        return JSONResponse(doc)
    return local_backend


@contextmanager
def _backend_saying(doc: dict[str, Any]) -> Iterator[str]:
    """A small real backend on 127.0.0.1 whose ``/api/v1/local-backend`` answers ``doc``."""
    app = Starlette(routes=[Route("/api/v1/local-backend", _answer(doc), methods=["GET"])])
    with serve_in_thread(app, name="device-backend") as server:
        yield f"{server.url}/api"


@pytest.mark.parametrize(("doc", "expected"), [
    ({"service": "synth-nb-local-backend"}, "device: unknown (the embedded backend did not say)"),
    ({"training_device": {"sft": {"device": "cpu"}}}, "device: unknown (the embedded backend names none for rl)"),
    ({"training_device": {"error": "the device probe did not finish: TimeoutExpired"}},
     "device: unknown (the device probe did not finish: TimeoutExpired)"),
    ({"training_device": {"rl": {"device": "cuda", "dtype": "bfloat16", "device_name": "\x1b[31mGPU\x07 X"}}},
     f"device: [31mGPU X, bfloat16 {MACHINE}"),
])
def test_an_embedded_backend_that_names_no_device_gets_unknown(doc: dict[str, Any], expected: str) -> None:
    with _backend_saying(doc) as url:
        assert device_line(Target(url, own_key="sk_local_test"), "sk_local_test", "rl") == expected
