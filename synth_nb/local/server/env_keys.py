"""Keys handed to the backend by its clients: ``GET /crypto/public-key`` and ``POST /env-keys``.

The hosted backend's own way (``setup_environment_api_key`` in synth-ai): the client seals the key with
this backend's public key, the backend opens it and keeps it in memory (``held_keys.HeldKeys``). The answer
names the key and the time, never its value; nothing answers a GET with a key.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.held_keys import ALGORITHM, ENVIRONMENT_API_KEY
from synth_nb.local.lifecycle import new_id, utc_now
from synth_nb.local.server.http import json_body
from synth_nb.local.server.state import state_of

__all__ = ["routes"]


async def public_key(request: Request) -> Response:
    keys = state_of(request).held_keys
    return JSONResponse({"public_key": keys.public_key_b64, "alg": ALGORITHM})


async def upload(request: Request) -> Response:
    body = await json_body(request)
    name, sealed = body.get("name"), body.get("ciphertext_b64")
    if not isinstance(name, str) or not name.strip() or len(name) > 128:
        raise ApiError(422, "name must be the key's name, e.g. ENVIRONMENT_API_KEY")
    if not isinstance(sealed, str) or not sealed:
        raise ApiError(422, "ciphertext_b64 must be a base64 libsodium sealed box")
    state = state_of(request)
    value = state.held_keys.open(sealed)
    state.held_keys.put(name.strip(), value)
    if name.strip() == ENVIRONMENT_API_KEY:
        state.runner.environment_api_key = value
    return JSONResponse({"id": new_id("envkey_"), "name": name.strip(), "updated_at": utc_now()})


routes = [
    Route("/crypto/public-key", public_key, methods=["GET"]),
    Route("/env-keys", upload, methods=["POST"]),
]
