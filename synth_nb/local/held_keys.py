"""The keys the backend holds for its clients, in this process's memory only (never SQLite, a file or an answer).

Clients hand keys over sealed with the backend's X25519 public key (a libsodium sealed box, see
``server.env_keys``), so only this process can open them. An ``ENVIRONMENT_API_KEY`` handed over becomes
the key the backend sends to task apps; the bundled example task apps it serves accept its own example key
and every ``ENVIRONMENT_API_KEY`` it has held, so jobs started with an earlier key keep working.
"""

from __future__ import annotations

import base64
import binascii
import threading

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, SealedBox

from synth_nb.local.errors import ApiError

__all__ = ["ALGORITHM", "ENVIRONMENT_API_KEY", "HeldKeys"]

ENVIRONMENT_API_KEY = "ENVIRONMENT_API_KEY"
ALGORITHM = "libsodium.sealedbox.v1"
#: the contract's limit on one key's plaintext
MAX_KEY_BYTES = 8 * 1024


class HeldKeys:
    """The keys this backend holds, in memory; ``on_environment_key`` is told each new task-app key."""

    def __init__(self, example_key: str, environment_key: str | None = None) -> None:
        self.example_key = example_key
        self._private = PrivateKey.generate()
        self._lock = threading.Lock()
        self._values: dict[str, str] = {}
        self._task_app_keys: list[str] = [environment_key] if environment_key else []

    @property
    def public_key_b64(self) -> str:
        return base64.b64encode(bytes(self._private.public_key)).decode("ascii")

    def open(self, ciphertext_b64: str) -> str:
        """The plaintext of a sealed box made with ``public_key_b64``; ``ApiError(400)`` if it is not one."""
        try:
            plain = SealedBox(self._private).decrypt(base64.b64decode(ciphertext_b64, validate=True))
        except (binascii.Error, CryptoError, ValueError):
            raise ApiError(400, "ciphertext_b64 is not a sealed box for this backend's public key; "
                                "fetch GET /api/v1/crypto/public-key again and reseal") from None
        if len(plain) > MAX_KEY_BYTES:
            raise ApiError(413, f"a key may be at most {MAX_KEY_BYTES} bytes")
        try:
            return plain.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "the sealed key is not UTF-8 text") from None

    def put(self, name: str, value: str) -> None:
        with self._lock:
            self._values[name] = value
            if name == ENVIRONMENT_API_KEY and value not in self._task_app_keys:
                self._task_app_keys.append(value)

    def get(self, name: str) -> str | None:
        with self._lock:
            return self._values.get(name)

    def example_app_keys(self) -> list[str]:
        """Keys the bundled example task apps accept now: the backend's own, then every task-app key held."""
        with self._lock:
            return [self.example_key, *self._task_app_keys]
