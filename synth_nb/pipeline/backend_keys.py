"""Hand the task-app key the pipeline resolved to the embedded backend, before anything probes a task app.

RL never sends ``ENVIRONMENT_API_KEY`` in its job body: the backend probes the task app
(``/rl/verify_task_app``) and runs rollouts with a key it holds. The hosted backend gets it through
``POST /api/v1/env-keys`` as a libsodium sealed box made with its public key; the embedded backend is
given the key the same way, so the key found in ``.env``, pasted in the wizard, read from Modal or from
the environment is the one it uses. Only that process can open the box, and it keeps the key in memory.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

import httpx

from synth_nb.backend import display_url
from synth_nb.errors import ClientError
from synth_nb.pipeline.target import Target
from synth_nb.secrets import ENVIRONMENT_API_KEY, SecretBundle

__all__ = ["share_keys"]

TIMEOUT = 30.0


def share_keys(target: Target, bundles: Iterable[SecretBundle | None]) -> int:
    """Give the embedded ``target`` each distinct ``ENVIRONMENT_API_KEY`` of ``bundles``; how many were given.

    A hosted backend (or one not started yet) is given nothing here.
    """
    if not (target.own_key and target.started):
        return 0
    values = list(dict.fromkeys(v for b in bundles if b is not None if (v := b.secret_value(ENVIRONMENT_API_KEY))))
    if not values:
        return 0
    from nacl.public import (  # measured: 40 ms, paid only when the embedded backend is used
        PublicKey,
        SealedBox,
    )

    try:
        with httpx.Client(base_url=target.url, headers={"Authorization": f"Bearer {target.own_key}"},
                          timeout=TIMEOUT, trust_env=False) as http:
            answer = http.get("/v1/crypto/public-key")
            answer.raise_for_status()
            box = SealedBox(PublicKey(base64.b64decode(answer.json()["public_key"])))
            for value in values:
                sealed = base64.b64encode(box.encrypt(value.encode("utf-8"))).decode("ascii")
                http.post("/v1/env-keys", json={"name": ENVIRONMENT_API_KEY, "ciphertext_b64": sealed}
                          ).raise_for_status()
    except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
        status = f" (HTTP {exc.response.status_code})" if isinstance(exc, httpx.HTTPStatusError) else ""
        raise ClientError(f"could not give ENVIRONMENT_API_KEY to the embedded backend at {display_url(target.url)}: "
                          f"{type(exc).__name__}{status}; is it still running? synth-nb backend --status") from None
    return len(values)
