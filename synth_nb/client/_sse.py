"""Server-Sent Events framing, a network chunk at a time.

A busy job's stream carries hundreds of frames per read; splitting each read into whole frames at once
(instead of decoding text and dispatching line by line) lets a follower hand its history one page per read,
at a fraction of the CPU per event. Follows the SSE grammar: ``\\r\\n``, ``\\r`` or ``\\n`` line ends,
``:`` comments, ``event``/``data``/``id`` fields (``retry`` and unknown fields are ignored), multi-line data
joined by ``\\n``, the last ``id`` carried over to later frames, a frame without data dispatches nothing.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SseFrame", "SseSplitter"]


class SseFrame(NamedTuple):
    """One dispatched frame: its event name ("message" by default), its data (UTF-8 bytes), the last id."""

    event: str
    data: bytes
    id: str | None


class SseSplitter:
    """Feed it the bytes of a stream as they arrive; it returns the frames completed by each chunk."""

    def __init__(self, *, max_frame: int | None = None) -> None:
        self._buffer = b""
        self._last_id: str | None = None
        #: the longest frame held while it is incomplete (None: no limit); longer is ``ValueError``
        self.max_frame = max_frame

    def feed(self, chunk: bytes) -> list[SseFrame]:
        buffer = self._buffer + chunk
        held = b""
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):  # maybe the first half of a "\r\n" split across reads
                buffer, held = buffer[:-1], b"\r"
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *blocks, rest = buffer.split(b"\n\n")
        if self.max_frame is not None and len(rest) > self.max_frame:
            raise ValueError(f"an event-stream frame longer than {self.max_frame:,} bytes")
        self._buffer = rest + held
        frames = []
        for block in blocks:
            frame = self._frame(block)
            if frame is not None:
                frames.append(frame)
        return frames

    def _frame(self, block: bytes) -> SseFrame | None:
        event, data = "message", []
        for line in block.split(b"\n"):
            if not line or line[0] == 0x3A:  # blank (a leading newline) or ":" comment
                continue
            field, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                event = value.decode() or "message"
            elif field == b"id" and b"\0" not in value:
                self._last_id = value.decode()
        if not data:
            return None
        return SseFrame(event, data[0] if len(data) == 1 else b"\n".join(data), self._last_id)
