"""Whether a listener is a data folder's embedded backend, asked without sending it the folder's key.

A ``backend.json`` left by a backend killed without cleaning up may name a port another program listens on
now, so the folder's ``api_key`` is never sent first: the listener must prove it holds the key (``GET
/local-backend/proof`` answers an HMAC of a random nonce and the address asked), and only then is the key sent
(``GET /api/v1/local-backend`` answers the backend's pid and what it serves). Finding, starting and stopping
a folder's backend (``synth_nb.local.shared``) and ``synth-nb backend --status`` all ask this way.

Nothing heavy is imported here (the probe is one standard-library GET): kernels ask before anything tells
whether the ``local`` extra is installed.
"""

from __future__ import annotations

import hmac
import http.client
import secrets

from synth_nb.local.key_files import SERVICE, key_proof
from synth_nb.local.probe import probe_get, probe_netloc

__all__ = ["PROBE_TIMEOUT", "SERVICE", "describe_backend"]

PROBE_TIMEOUT = 10.0


def _proves_key(url: str, api_key: str, timeout: float) -> str:
    """``ours`` when ``url`` proves it holds ``api_key`` (the key itself is not sent); else busy/gone/refused."""
    nonce = secrets.token_hex(16)
    try:
        answer = probe_get(f"{url}/local-backend/proof", params={"nonce": nonce}, timeout=timeout)
        doc = answer.json()
    except TimeoutError:
        return "busy"
    except (OSError, http.client.HTTPException, ValueError):
        return "gone"
    if answer.status_code != 200 or not isinstance(doc, dict) or doc.get("service") != SERVICE:
        return "gone"
    expected = key_proof(api_key, nonce, probe_netloc(url))
    return "ours" if hmac.compare_digest(str(doc.get("proof", "")), expected) else "refused"


def describe_backend(url: str, api_key: str, *, jobs: bool = False,
                     timeout: float = PROBE_TIMEOUT) -> tuple[str, dict[str, object]]:
    """``("ours", description)``, ``("gone", {})``, ``("busy", {})`` or ``("refused", {})`` for ``url``.

    ``api_key`` is sent only to a listener that proved it holds it.
    """
    proved = _proves_key(url, api_key, timeout)
    if proved != "ours":
        return proved, {}
    try:
        answer = probe_get(f"{url}/api/v1/local-backend", params=None if jobs else {"jobs": "0"},
                      headers={"Authorization": f"Bearer {api_key}"}, timeout=timeout)
    except TimeoutError:
        return "busy", {}
    except (OSError, http.client.HTTPException):
        return "gone", {}
    if answer.status_code in (401, 403):
        return "refused", {}
    try:
        doc = answer.json()
    except ValueError:
        return "gone", {}
    if answer.status_code != 200 or not isinstance(doc, dict) or doc.get("service") != SERVICE:
        return "gone", {}
    return "ours", doc
