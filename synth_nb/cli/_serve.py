"""Keep a foreground server command alive until Ctrl-C or SIGTERM, then stop it cleanly."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType

__all__ = ["serve_until_stopped"]


def serve_until_stopped(banner: Iterable[str], stop_server: Callable[[], None], *,
                        gone: Callable[[], str | None] | None = None, check_every: float = 2.0) -> int:
    """Print ``banner``, block until Ctrl-C / SIGTERM, call ``stop_server`` and return exit code 0.

    ``gone`` is asked every ``check_every`` seconds whether what the server serves has gone (its data
    folder deleted): a reason it says is printed and the server stops. Everything after the server started
    runs inside the ``try``, so an interrupt at any point (even while the banner prints) still stops it.
    """
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, _on_signal)
    try:
        for line in banner:
            print(line, flush=True)
        print("Ctrl-C to stop.", flush=True)
        next_check = time.monotonic() + check_every
        while not stop.wait(0.5):
            if gone is not None and time.monotonic() >= next_check:
                why = gone()
                if why:
                    print(why, flush=True)
                    break
                next_check = time.monotonic() + check_every
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop_server()
    return 0
