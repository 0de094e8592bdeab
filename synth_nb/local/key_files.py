"""The keys a data folder keeps for its backend, one file each, readable by their owner only (0600).

``api_key`` is the bearer key clients send; ``task_app_key`` is the key of the bundled example task apps
the backend serves. Both are made on first use and kept, so every process using the folder finds them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["API_KEY_FILE", "SERVICE", "TASK_APP_KEY_FILE", "ensure_key", "key_proof", "read_key", "rotate_keys",
           "write_private"]

API_KEY_FILE = "api_key"
TASK_APP_KEY_FILE = "task_app_key"
#: what a new key of each file starts with
PREFIXES = {API_KEY_FILE: "sk_local_", TASK_APP_KEY_FILE: "sk_env_local_"}


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step (no reader sees half a file), readable by its owner only."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def read_key(path: Path) -> str | None:
    """The key saved in ``path``, or None."""
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def ensure_key(data_dir: Path, name: str) -> tuple[str, bool]:
    """The key in ``data_dir/name``, else a new one written there; and whether it is new."""
    path = Path(data_dir) / name
    saved = read_key(path)
    if saved:
        return saved, False
    key = f"{PREFIXES[name]}{secrets.token_hex(24)}"
    write_private(path, key + "\n")
    return key, True


def rotate_keys(data_dir: Path) -> None:
    """Replace both keys by new ones (a stale info file may have led an older client to send them away)."""
    for name in (API_KEY_FILE, TASK_APP_KEY_FILE):
        write_private(Path(data_dir) / name, f"{PREFIXES[name]}{secrets.token_hex(24)}\n")


#: the embedded backend's name for itself: its health, description and proof say it, and its key proof is bound
#: to it (anything naming another service is not a backend of ours)
SERVICE = "synth-nb-local-backend"


def key_proof(key: str, nonce: str, address: str) -> str:
    """What a backend holding ``key`` answers to ``nonce`` on ``address`` (``host:port``): proof of the key that
    does not reveal it; bound to the address, so a listener elsewhere cannot relay a real backend's answer."""
    return hmac.new(key.encode(), f"{SERVICE}|{nonce}|{address}".encode(), hashlib.sha256).hexdigest()
