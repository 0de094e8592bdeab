"""What one answer may cost the client: its size, its nesting depth and the time it takes to arrive.

A backend is input from outside. Without bounds a 200 MiB status took 1.4 GiB of memory, a status nested
200,000 levels deep raised ``RecursionError`` from the JSON decoder, and an answer dripping one byte every
two seconds kept a request open for as long as the backend liked (every read was within the read timeout).
Every answer is read through ``read_bounded``: beyond ``MAX_ANSWER_BYTES`` (decoded), deeper than
``MAX_DEPTH`` or slower than its deadline, it is refused with one line naming the URL.
"""

from __future__ import annotations

import re
import time

import httpx

from synth_nb.errors import BackendAnswerError
from synth_nb.secrets._mask import mask_userinfo

__all__ = ["MAX_ANSWER_BYTES", "MAX_DEPTH", "answer_seconds", "check_depth", "read_bounded", "send_bounded",
           "too_deep"]

#: the largest answer read (after content decoding): a page of 10,000 events is about 2-4 MiB
MAX_ANSWER_BYTES = 64 * 2**20
#: the deepest nesting of arrays and objects accepted in an answer (the contract's documents use < 10)
MAX_DEPTH = 64
#: the bytes that are not JSON structure (quotes and brackets), deleted by ``bytes.translate``
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')
#: a string left over once the bracket-free ones are gone (its content holds brackets)
_STRING = re.compile(rb'"[^"]*"')
#: answers up to this size are first told by counting their brackets (a page of history has thousands: two
#: passes over megabytes for nothing, the structure's own pass tells it)
_COUNTED = 64 * 1024


def answer_seconds(timeout: float | None) -> float:
    """The longest one answer may take to arrive in full (httpx's timeouts apply to each read alone)."""
    return max(2 * (timeout or 30.0), 60.0)


def _where(response: httpx.Response) -> str:
    request = response.request
    return f"{request.method} {mask_userinfo(str(request.url))}"


async def read_bounded(response: httpx.Response, *, limit: int = MAX_ANSWER_BYTES,
                       seconds: float | None = None) -> bytes:
    """The body of a streamed ``response``, refused (``BackendAnswerError``) beyond ``limit`` bytes, and cut
    (``httpx.ReadTimeout``, retried like any slow read) once reading it takes longer than ``seconds``."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BackendAnswerError(f"{_where(response)}: the backend answered {int(declared):,} bytes, more than "
                                 f"the {limit // 2**20} MiB an answer may have; nothing of it was used")
    started, chunks, size = time.monotonic(), [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise BackendAnswerError(f"{_where(response)}: the backend's answer is larger than the "
                                     f"{limit // 2**20} MiB an answer may have; nothing of it was used")
        chunks.append(chunk)
        if seconds is not None and time.monotonic() - started > seconds:
            raise httpx.ReadTimeout(f"the answer was still arriving after {seconds:.0f} s ({size:,} bytes so far)",
                                    request=response.request)
    return b"".join(chunks)


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects more than ``limit`` levels deep (within a factor
    of two: one level more than ``limit`` may pass, ``2 * limit`` never does). Linear and in C: the strings
    and everything but brackets are dropped, then innermost pairs are removed a level per pass."""
    if len(raw) <= _COUNTED and raw.count(b"[") + raw.count(b"{") <= limit:  # an event frame, a status document
        return False
    if b"\\" in raw:  # escaped backslashes and quotes would unbalance the quotes
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # adjacent quotes close a string and open the next, or close an empty one: either way nothing between
    # them is structure, so dropping the pairs keeps the structure exactly
    structure = raw.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = _STRING.sub(b"", structure)
    for _ in range(limit):
        if not structure:
            return False
        inner = structure.replace(b"[]", b"").replace(b"{}", b"")
        if len(inner) == len(structure):  # unbalanced, so not JSON: deep if its opening brackets are many
            return structure.count(b"[") + structure.count(b"{") > limit
        structure = inner
    return bool(structure)


def check_depth(raw: bytes, response: httpx.Response) -> None:
    """Refuse a JSON answer nested deeper than ``MAX_DEPTH`` (decoding it would exhaust the stack)."""
    start = raw[:64].lstrip()[:1]
    if start in (b"{", b"[") and too_deep(raw):
        raise BackendAnswerError(f"{_where(response)}: the backend answered JSON nested deeper than "
                                 f"{MAX_DEPTH} levels; nothing of it was used")


async def send_bounded(http: httpx.AsyncClient, request: httpx.Request, timeout: float) -> httpx.Response:
    """Send ``request`` and read its answer within the bounds: the response returned holds the whole body,
    decoded (``timeout``: the request's, of which the answer's deadline is made)."""
    streamed = await http.send(request, stream=True)
    try:
        content = await read_bounded(streamed, seconds=answer_seconds(timeout))
    finally:
        await streamed.aclose()
    check_depth(content, streamed)
    headers = httpx.Headers(streamed.headers)
    for name in ("content-encoding", "content-length", "transfer-encoding"):  # the body is decoded now
        headers.pop(name, None)
    return httpx.Response(streamed.status_code, headers=headers, content=content, request=streamed.request,
                          extensions=streamed.extensions)
