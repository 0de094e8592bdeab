"""Modal secrets as a secrets source, read through the ``modal`` command-line client.

The Modal CLI has no command that prints a secret's values, so this runs ``env -0`` in a short-lived Modal
container with the secret attached (``modal shell --secret NAME --cmd "env -0"``) and keeps only the keys
synth-nb knows about. Only used when explicitly asked for (``--modal-secret NAME`` or the wizard toggle).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

from synth_nb.errors import SecretsError

__all__ = ["read_modal_secret", "source_label"]

_TIMEOUT_S = 180.0


def source_label(name: str) -> str:
    return f"modal:{name}"


def _parse_env_dump(text: str) -> dict[str, str]:
    records = text.split("\0") if "\0" in text else text.splitlines()
    found: dict[str, str] = {}
    for record in records:
        key, sep, value = record.strip("\n").partition("=")
        if sep and key and key.replace("_", "").isalnum():
            found[key] = value
    return found


def read_modal_secret(name: str, keys: Iterable[str], *, executable: str | None = None) -> dict[str, str]:
    """Values of ``keys`` found in the Modal secret ``name`` (empty values dropped)."""
    exe = executable or shutil.which("modal")
    if exe is None:
        raise SecretsError(
            f"--modal-secret {name}: the 'modal' command is not installed or not on PATH "
            "(pip install modal && modal setup), or pass the keys with --env-file instead"
        )
    cmd = [exe, "shell", "--secret", name, "--cmd", "env -0"]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise SecretsError(f"--modal-secret {name}: the modal client did not answer within "
                           f"{int(_TIMEOUT_S)} s") from None
    except OSError as exc:
        raise SecretsError(f"--modal-secret {name}: cannot run the modal client: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        hint = detail[-1][:200] if detail else f"exit code {proc.returncode}"
        raise SecretsError(
            f"--modal-secret {name}: the modal client failed ({hint}); check the secret name with "
            "'modal secret list' and that you are logged in ('modal setup')"
        )
    dump = _parse_env_dump(proc.stdout.decode("utf-8", "replace"))
    wanted = set(keys)
    return {k: v.strip() for k, v in dump.items() if k in wanted and v.strip()}
