"""File routes: multipart upload, lookup, list, delete.

Uploads are written under ``<data_dir>/files`` with generated names (mode 0600); the client's filename is
kept only as metadata and must be a plain name (no directories, no ``..``). The body is read as a stream
and refused with 413 as soon as it passes the limit, so an oversized (or chunked) upload is never spooled
whole. An ``Idempotency-Key`` header makes a retried upload return the file the first attempt stored.
"""

from __future__ import annotations

import contextlib
import errno
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartParser
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.lifecycle import new_id
from synth_nb.local.server.http import int_param, limited_stream
from synth_nb.local.server.state import BackendState, state_of

__all__ = ["file_document", "routes"]

_CHUNK = 1024 * 1024
#: room for the multipart framing and the small fields around the file itself
_FRAMING_BYTES = 64 * 1024
_FORBIDDEN = ("/", "\\", "\x00")


def file_document(row: dict[str, Any]) -> dict[str, Any]:
    """OpenAI-style file object (``id`` is what 0.2.24 reads; ``status`` ready ends its wait)."""
    created = int(datetime.fromisoformat(row["created_at"].replace("Z", "+00:00")).timestamp())
    return {"id": row["id"], "file_id": row["id"], "object": "file", "purpose": row["purpose"],
            "filename": row["filename"], "bytes": row["bytes"], "created_at": created, "status": "ready"}


def _plain_name(name: str | None) -> str:
    if not name:
        return "upload.jsonl"
    if any(ch in name for ch in _FORBIDDEN) or name in (".", "..") or len(name) > 255:
        raise ApiError(400, f"file name {name!r} must be a plain file name (no directories, no '..')")
    return name


async def _parse_form(request: Request, limit: int) -> FormData:
    """The multipart form, read under ``limit`` (+ framing): 413 as soon as the stream passes it."""
    if "multipart/form-data" not in request.headers.get("content-type", ""):
        raise ApiError(415, "upload a file as multipart/form-data with a 'file' field and a 'purpose' field")
    stream = limited_stream(request, limit + _FRAMING_BYTES, what="upload")
    try:
        return await MultiPartParser(request.headers, stream, max_files=1, max_fields=20).parse()
    except ApiError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ApiError(507, "no space left for the upload's temporary file on this backend's machine") from None
        raise ApiError(400, f"could not parse the multipart body: {exc}") from None
    except Exception as exc:  # malformed multipart bodies come in many shapes
        raise ApiError(400, f"could not parse the multipart body: {exc}") from None


async def _store(state: BackendState, part: UploadFile, stored_name: str, limit: int) -> int:
    """Copy the uploaded part to ``files/<stored_name>``; returns its size (413 past ``limit``)."""
    size = 0
    try:
        with state.storage.open_upload(stored_name) as out:
            while chunk := await part.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise ApiError(413, f"upload is larger than the {limit}-byte limit of this backend")
                out.write(chunk)
    except BaseException:
        _discard(state, stored_name)
        raise
    return size


def _discard(state: BackendState, stored_name: str) -> None:
    with contextlib.suppress(OSError):
        Path(state.storage.files_dir / stored_name).unlink(missing_ok=True)


async def upload(request: Request) -> JSONResponse:
    state = state_of(request)
    key = request.headers.get("idempotency-key") or None
    earlier = state.storage.file_for_key(key)
    if earlier is not None:  # a retry: the body is not read, the first upload stands
        return JSONResponse(file_document(earlier), status_code=200)
    limit = state.max_upload_bytes
    form = await _parse_form(request, limit)
    try:
        part = form.get("file")
        if not isinstance(part, UploadFile):
            raise ApiError(422, "multipart field 'file' is missing (or is not a file)")
        purpose = form.get("purpose") or "fine-tune"
        if not isinstance(purpose, str):
            raise ApiError(422, "field 'purpose' must be text")
        filename = _plain_name(part.filename)
        file_id = new_id("file_")
        stored_name = f"{file_id}.bin"
        size = await _store(state, part, stored_name, limit)
    finally:
        await form.close()
    row, created = state.storage.add_file(file_id, filename, purpose, size, stored_name, key)
    if not created:  # a concurrent retry with the same key stored first
        _discard(state, stored_name)
    return JSONResponse(file_document(row), status_code=200)


async def get_file(request: Request) -> JSONResponse:
    row = state_of(request).storage.get_file(request.path_params["file_id"])
    if row is None:
        raise ApiError(404, f"file {request.path_params['file_id']!r} not found")
    return JSONResponse(file_document(row))


async def list_files(request: Request) -> JSONResponse:
    limit = int_param(request, "limit", 20, minimum=1, maximum=1000)
    rows = state_of(request).storage.list_files(request.query_params.get("purpose"), limit or 20)
    docs = [file_document(r) for r in rows]
    return JSONResponse({"object": "list", "data": docs, "files": docs, "has_more": False})


async def delete_file(request: Request) -> JSONResponse:
    file_id = request.path_params["file_id"]
    if not state_of(request).storage.delete_file(file_id):
        raise ApiError(404, f"file {file_id!r} not found")
    return JSONResponse({"id": file_id, "object": "file", "deleted": True})


async def file_jobs(request: Request) -> JSONResponse:
    file_id = request.path_params["file_id"]
    storage = state_of(request).storage
    if storage.get_file(file_id) is None:
        raise ApiError(404, f"file {file_id!r} not found")
    jobs = [j.id for j in storage.list_jobs(kind="sft", limit=1000) if j.body.get("training_file_id") == file_id]
    return JSONResponse({"data": [{"job_id": j} for j in jobs], "has_more": False})


routes = [
    Route("/files", upload, methods=["POST"]),
    Route("/learning/files", upload, methods=["POST"]),
    Route("/files", list_files, methods=["GET"]),
    Route("/files/{file_id}", get_file, methods=["GET"]),
    Route("/files/{file_id}", delete_file, methods=["DELETE"]),
    Route("/files/{file_id}/jobs", file_jobs, methods=["GET"]),
]
