"""A small fault-injecting TCP proxy on 127.0.0.1, run on its own event loop in a thread.

Every accepted connection gets one fate, drawn from a seeded random generator: ``pass`` (forwarded as is),
``delay`` (each chunk held back a little), ``drop`` (closed before reading anything), ``reset`` (the request
is read, then the connection is reset with RST), ``truncate`` (the answer is cut after a random number of
bytes, possibly in the middle of a later answer on a kept-alive connection). ``outage(seconds)`` stops
listening altogether (connections are refused) and closes every open connection, then listens again on
the same port.
"""

from __future__ import annotations

import asyncio
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

FATES = ("pass", "delay", "drop", "reset", "truncate")


class FaultProxy:
    def __init__(self, upstream_port: int, *, fault_rate: float = 0.3, seed: int = 13) -> None:
        self.upstream_port = upstream_port
        self.fault_rate = fault_rate
        self.random = random.Random(seed)
        self.faults: Counter[str] = Counter()
        self.connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)

    @property
    def injected(self) -> int:
        return sum(n for fate, n in self.faults.items() if fate != "pass")

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}"

    # -- lifecycle (called from the test's thread) ----------------------------------------------------

    def start(self) -> FaultProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self) -> None:
        self._call(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def outage(self, seconds: float, *, until: Callable[[], bool] | None = None, longest: float = 60.0) -> None:
        """Refuse every connection for ``seconds`` (blocking the caller), then accept again. With ``until``,
        the outage goes on past ``seconds`` until ``until()`` is true (at most ``longest`` seconds): a client
        asleep in a retry backoff may otherwise sleep through a short outage and never see it."""
        self._call(self._close_all())
        started = time.monotonic()
        threading.Event().wait(seconds)
        while until is not None and not until() and time.monotonic() - started < longest:
            threading.Event().wait(0.2)
        self.faults["outage"] += 1
        self._call(self._listen())

    def _call(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)  # type: ignore[arg-type]

    # -- on the proxy's loop ---------------------------------------------------------------------------

    async def _listen(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self._server = await asyncio.start_server(self._handle, sock=sock)

    async def _close_all(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            _reset(writer)

    def _fate(self) -> str:
        if self.random.random() >= self.fault_rate:
            return "pass"
        return self.random.choice(FATES[1:])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        cut = _Cut()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            self._writers.add(up_writer)
            answers = asyncio.ensure_future(self._answers(up_reader, writer, cut))
            try:
                await self._requests(reader, writer, up_writer, cut)
                await answers
            finally:
                answers.cancel()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    with suppress(Exception):
                        w.close()

    async def _requests(self, src: asyncio.StreamReader, client: asyncio.StreamWriter,
                        upstream: asyncio.StreamWriter, cut: _Cut) -> None:
        """Client to backend: each chunk read (a request, mostly) meets its fate."""
        while chunk := await src.read(65536):
            fate = self._fate()
            self.faults[fate] += 1
            if fate == "drop":
                _reset(client)
                return
            if fate == "delay":
                await asyncio.sleep(self.random.uniform(0.05, 0.4))
            if fate == "truncate":
                cut.after = self.random.randint(1, 4000)
            upstream.write(chunk)
            await upstream.drain()
            if fate == "reset":
                await asyncio.sleep(0.02)  # let the backend act on it: only the answer is lost
                _reset(client)
                return
        with suppress(OSError):
            upstream.write_eof()

    async def _answers(self, src: asyncio.StreamReader, client: asyncio.StreamWriter, cut: _Cut) -> None:
        """Backend to client, cut (then reset) once a truncating request's budget of bytes went by."""
        while chunk := await src.read(65536):
            if cut.after is not None and len(chunk) >= cut.after:
                client.write(chunk[: cut.after])
                await client.drain()
                _reset(client)
                return
            if cut.after is not None:
                cut.after -= len(chunk)
            client.write(chunk)
            await client.drain()
        with suppress(Exception):
            client.close()


class _Cut:
    """How many more answer bytes a connection may carry (``None``: no limit)."""

    after: int | None = None


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST instead of FIN (SO_LINGER 0): the peer sees "connection reset"."""
    sock = writer.get_extra_info("socket")
    with suppress(OSError):
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with suppress(Exception):
        writer.transport.abort()


@contextmanager
def fault_proxy(upstream_port: int, **options: float) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream_port, **options).start()  # type: ignore[arg-type]
    try:
        yield proxy
    finally:
        proxy.stop()
