"""An HTTP CONNECT proxy on 127.0.0.1 that counts the bytes its tunnels carry, for the install benchmark.

pip and uv send every download through ``HTTPS_PROXY`` as a CONNECT tunnel, so the bytes counted here are
what the network delivered to the installer (TLS records included: within a percent of the files' sizes),
whatever else the machine's other users download at the same time (an interface counter would count
theirs too).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

__all__ = ["CountingProxy"]

_HEAD_LIMIT = 16 * 1024
_CHUNK = 256 * 1024


class CountingProxy:
    """``with CountingProxy() as proxy:`` -> ``proxy.url`` for ``HTTPS_PROXY``; ``proxy.down`` / ``proxy.up``
    are the bytes received from and sent to the servers since the last ``reset()``."""

    def __init__(self) -> None:
        self.down = 0
        self.up = 0
        #: bytes received per server (host name), since the last ``reset()``
        self.by_host: dict[str, int] = {}
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="counting-proxy", daemon=True)

    def reset(self) -> None:
        self.down = self.up = 0
        self.by_host = {}

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the counting proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        method, _, rest = head[:_HEAD_LIMIT].decode("latin-1").partition(" ")
        target = rest.split(" ", 1)[0]
        host, _, port = target.rpartition(":")
        if method != "CONNECT" or not host or not port.isdigit():
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host.strip("[]"), int(port)), 60)
        except (OSError, TimeoutError):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(self._pipe(reader, up_writer, ""), self._pipe(up_reader, writer, host))

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, server: str) -> None:
        """Copy one direction of a tunnel; ``server`` names the host when it is the server's side, else ""."""
        try:
            while chunk := await source.read(_CHUNK):
                if server:
                    self.down += len(chunk)
                    self.by_host[server] = self.by_host.get(server, 0) + len(chunk)
                else:
                    self.up += len(chunk)
                sink.write(chunk)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                sink.close()
