"""File routes (contract §2.1): multipart upload, lookup, list, delete.

Uploads are written under ``<data_dir>/files`` with generated names; the client's filename is kept only
as metadata and must be a plain name (no directories, no ``..``). Size is capped while streaming.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.lifecycle import new_id
from synth_nb.local.server.http import ApiError, int_param
from synth_nb.local.server.state import state_of

__all__ = ["file_document", "routes"]

_CHUNK = 1024 * 1024
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


async def upload(request: Request) -> JSONResponse:
    state = state_of(request)
    limit = state.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + 64 * 1024:
        raise ApiError(413, f"upload is larger than the {limit}-byte limit of this backend")
    if "multipart/form-data" not in request.headers.get("content-type", ""):
        raise ApiError(415, "upload a file as multipart/form-data with a 'file' field and a 'purpose' field")
    try:
        form = await request.form(max_files=1, max_fields=20)
    except ApiError:
        raise
    except Exception as exc:  # malformed multipart bodies come in many shapes
        raise ApiError(400, f"could not parse the multipart body: {exc}") from None
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
        target = state.storage.files_dir / stored_name
        size = 0
        try:
            with open(target, "wb") as out:
                while chunk := await part.read(_CHUNK):
                    size += len(chunk)
                    if size > limit:
                        raise ApiError(413, f"upload is larger than the {limit}-byte limit of this backend")
                    out.write(chunk)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
    finally:
        await form.close()
    row = state.storage.add_file(file_id, filename, purpose, size, stored_name)
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
