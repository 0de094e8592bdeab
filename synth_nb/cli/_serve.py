"""Keep a foreground server command alive until Ctrl-C or SIGTERM, then stop it cleanly."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable
from types import FrameType

__all__ = ["serve_until_stopped"]


def serve_until_stopped(banner: Iterable[str], stop_server: Callable[[], None]) -> int:
    """Print ``banner``, block until Ctrl-C / SIGTERM, call ``stop_server`` and return exit code 0.

    Everything after the server started runs inside the ``try``, so an interrupt at any point (even while
    the banner prints) still stops the server.
    """
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, _on_signal)
    try:
        for line in banner:
            print(line, flush=True)
        print("Ctrl-C to stop.", flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop_server()
    return 0
