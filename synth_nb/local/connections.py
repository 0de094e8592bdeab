"""The embedded backend's connections, bounded: in number, in the time a request's head may take, and in how
a refused body ends.

uvicorn by itself waits forever for a request's headers, so sockets that send them a byte at a time hold a
file descriptor each for as long as they like; and when it answers before a body was read to its end (413
too large, 401 without a key) it closes the socket with the rest of the body unread, which makes the kernel
reset the connection, often before the client has read the answer (it then says "connection reset" instead
of "413 too large"). ``guarded_protocol`` is uvicorn's own HTTP protocol with three guards:

* at most ``max_connections`` open at once: one more is answered 503 and closed at once;
* ``header_timeout`` seconds (and ``HEAD_BYTES``) for a request's line and headers, counted from the
  connection's opening or from the first byte of the next request on a kept-alive connection: past either,
  the connection is closed;
* a response that ends a connection whose request body is not read to its end half-closes it (the answer,
  then end of stream) and reads and drops what the client still sends, up to ``drain_bytes`` or
  ``drain_seconds``, before closing: the client reads the answer, whatever it was still sending.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

__all__ = ["DRAIN_BYTES", "DRAIN_SECONDS", "HEADER_TIMEOUT", "HEAD_BYTES", "MAX_CONNECTIONS", "guarded_protocol"]

#: seconds for a request's line and headers (a client on this machine sends them in one write)
HEADER_TIMEOUT = 10.0
#: open connections at once: every panel, command and rollout client of one machine, with room to spare
MAX_CONNECTIONS = 256
#: bytes of a request's line and headers (uvicorn's httptools parser has no bound of its own)
HEAD_BYTES = 64 * 1024
#: what is read and dropped of a refused body after the answer, at most: a client that reads the answer only
#: once it has sent its whole body (httpx, requests) sees a reset instead past this; on this machine's
#: loopback that many bytes take well under a second
DRAIN_BYTES = 512 * 1024 * 1024
DRAIN_SECONDS = 30.0

_BUSY = b'{"detail": "the backend has too many open connections; try again"}'


class _Lingering:
    """The connection's transport, whose ``close`` lingers while the request body is still coming in."""

    def __init__(self, transport: asyncio.Transport, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol.close_connection()

    def is_closing(self) -> bool:
        return bool(self._protocol.draining or self._transport.is_closing())


def guarded_protocol(*, header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
                     drain_bytes: int = DRAIN_BYTES, drain_seconds: float = DRAIN_SECONDS) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools, else h11) with the guards above; for ``uvicorn.Config(http=...)``."""
    base: Any = AutoHTTPProtocol

    class Guarded(base):
        draining = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            self.raw = transport
            self.head_timer: asyncio.TimerHandle | None = None
            self.drain_timer: asyncio.TimerHandle | None = None
            self.head_bytes = 0
            self.drained = 0
            self.no_linger = False
            super().connection_made(_Lingering(transport, self))
            if len(self.connections) > max_connections:
                transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                                b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_BUSY), _BUSY))
                self.no_linger = True
                transport.close()
                return
            self._await_head()

        # -- the request's head -------------------------------------------------------------------------
        def _await_head(self) -> None:
            self.head_bytes = 0
            self.head_timer = self.loop.call_later(header_timeout, self._head_too_slow)

        def _head_done(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _head_too_slow(self) -> None:
            self.head_timer = None
            self.no_linger = True
            self.raw.close()

        def data_received(self, data: bytes) -> None:
            if self.draining:
                self.drained += len(data)
                if self.drained > drain_bytes:
                    self.raw.close()
                return
            between = self.cycle is None or self.cycle.response_complete
            if self.head_timer is None and between:
                self._await_head()  # the first bytes of the next request of a kept-alive connection
            before = self.cycle
            if self.head_timer is not None:
                self.head_bytes += len(data)
            super().data_received(data)
            if self.cycle is not before:  # its line and headers are in (a body may have come with them)
                self._head_done()
            elif self.head_timer is not None and self.head_bytes > HEAD_BYTES:
                self._head_too_slow()  # that much and still no end of the headers

        # -- the end of a connection --------------------------------------------------------------------
        def close_connection(self) -> None:
            """What uvicorn's ``transport.close()`` does here: linger while the request body still comes."""
            if self.draining or self.raw.is_closing():
                return
            unread = self.cycle is not None and self.cycle.more_body and not self.cycle.disconnected
            if self.no_linger or not unread or not self.raw.can_write_eof():
                self.raw.close()
                return
            self.draining = True
            self._head_done()
            self.raw.write_eof()  # after the answer already written: the client reads it, then end of stream
            self.flow.resume_reading()
            self.drain_timer = self.loop.call_later(drain_seconds, self.raw.close)

        def eof_received(self) -> bool | None:
            if self.draining:
                self.raw.close()  # the client sent all it had: nothing left to reset
                return None
            result: bool | None = super().eof_received()
            return result

        def shutdown(self) -> None:
            self.no_linger = True  # the server stops: no lingering
            super().shutdown()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_done()
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            super().connection_lost(exc)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded
