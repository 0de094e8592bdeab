"""Request bodies are bounded while they stream in, and deeply nested JSON is a plain 400, never a 500.

The app is driven in-process through httpx's ASGI transport, which hands the body to the server one chunk
at a time as it asks for them: counting the chunks pulled shows where the server stopped reading.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from local_backend_helpers import API_KEY
from starlette.applications import Starlette

from synth_nb.local import create_app
from synth_nb.local.server.app import close_app
from synth_nb.local.server.http import MAX_JSON_DEPTH

LIMIT = 64 * 1024
CHUNK = 8 * 1024


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Starlette]:
    built = create_app(tmp_path / "data", API_KEY, max_upload_bytes=LIMIT, max_json_bytes=LIMIT)
    yield built
    close_app(built)


class Body:
    """A bounded chunked body of ``total`` bytes that counts how much of it the server read."""

    def __init__(self, head: bytes, total: int, filler: bytes = b"x") -> None:
        self.head, self.total, self.filler, self.sent = head, total, filler, 0

    async def chunks(self) -> AsyncIterator[bytes]:
        yield self.head
        self.sent = len(self.head)
        while self.sent < self.total:
            chunk = self.filler * CHUNK
            self.sent += len(chunk)
            yield chunk


async def _post(app: Starlette, path: str, body: Body, content_type: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000/api",
                                 headers={"Authorization": f"Bearer {API_KEY}"}) as client:
        return await client.post(path, content=body.chunks(), headers={"Content-Type": content_type})


async def test_a_chunked_upload_past_the_limit_is_refused_before_it_is_read_whole(app: Starlette) -> None:
    head = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
            b"Content-Type: application/jsonl\r\n\r\n")
    body = Body(head, total=8 * LIMIT)
    response = await _post(app, "/files", body, "multipart/form-data; boundary=b")
    assert response.status_code == 413 and "limit" in response.json()["detail"]
    assert body.sent <= LIMIT + 64 * 1024 + 2 * CHUNK  # the limit, the framing allowance, one chunk in flight
    assert not list((Path(app.state.backend.storage.files_dir)).iterdir())


async def test_a_chunked_job_body_past_the_limit_is_refused_without_reading_it(app: Starlette) -> None:
    body = Body(b'{"metadata": {"local_executor": "replay"}, "padding": "', total=8 * LIMIT)
    response = await _post(app, "/learning/jobs", body, "application/json")
    assert response.status_code == 413 and str(LIMIT) in response.json()["detail"]
    assert body.sent <= LIMIT + 2 * CHUNK
    assert app.state.backend.storage.list_jobs() == []


async def test_a_declared_oversized_body_is_refused_before_reading(app: Starlette) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000/api",
                                 headers={"Authorization": f"Bearer {API_KEY}"}) as client:
        response = await client.post("/learning/jobs", content=b" " * (LIMIT + 1))
    assert response.status_code == 413


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5_000, 30_000])
async def test_deeply_nested_json_is_a_plain_400(app: Starlette, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    body = Body(f'{{"metadata": {{"local_executor": "replay"}}, "deep": {nested}}}'.encode(), total=0)
    for path in ("/learning/jobs", "/rl/jobs", "/prompt-learning/online/jobs"):
        response = await _post(app, path, body, "application/json")
        assert response.status_code == 400, response.text
        assert "nested too deeply" in response.json()["detail"]


async def test_json_just_inside_the_depth_limit_is_accepted(app: Starlette) -> None:
    deep: object = {}
    for _ in range(MAX_JSON_DEPTH - 2):
        deep = {"x": deep}
    body = Body(json.dumps({"metadata": {"local_executor": "replay"}, "deep": deep}).encode(), total=0)
    response = await _post(app, "/learning/jobs", body, "application/json")
    assert response.status_code == 201, response.text
