"""``GET /local-backend``: which process this is, its data folder, its jobs by status and its example apps.

``synth-nb backend --status`` prints it, and a kernel checks the ``pid`` against the info file before it
reuses (or stops) the process the file names: a pid the system gave to another program since is never
signalled. ``?jobs=0`` leaves the job counts out (the cheap answer a kernel asks for). ``?device=1`` adds
``training_device``: per training flow, the device its worker uses on this machine (the pre-flight card shows
it); the first such answer waits for a probe of torch (``training.device_probe``), later ones are instant.

``GET /local-backend/proof?nonce=N`` (outside ``/api``: no key) answers ``key_proof(api_key, N, host:port)``:
a client checks it against the folder's key file before it sends that key, so a stale info file naming a
port some other program now listens on never leads it to send the key there.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.examples import TASK_APPS, task_app_path
from synth_nb.local.key_files import SERVICE, key_proof
from synth_nb.local.server.state import state_of
from synth_nb.local.training.device_probe import training_devices

__all__ = ["PROOF_PATH", "SERVICE", "proof_routes", "routes"]

PROOF_PATH = "/local-backend/proof"
_NONCE = re.compile(r"[0-9a-f]{32,128}")

#: enough for any folder a person uses; counting reads job rows, not their events
_MAX_COUNTED = 1_000_000


async def backend_status(request: Request) -> Response:
    state = state_of(request)
    answer = {
        "service": SERVICE,
        "pid": os.getpid(),
        "data_dir": str(state.storage.data_dir.resolve()),
        "task_apps": {name: task_app_path(name) for name in TASK_APPS},
        "holds_environment_api_key": bool(state.runner.environment_api_key),
    }
    if request.query_params.get("jobs") != "0":
        jobs = Counter(job.status for job in state.storage.list_jobs(limit=_MAX_COUNTED))
        answer["jobs"] = dict(sorted(jobs.items()))
    if request.query_params.get("device") == "1":
        answer["training_device"] = await run_in_threadpool(training_devices)
    return JSONResponse(answer)


routes = [Route("/local-backend", backend_status, methods=["GET"])]


async def key_proof_answer(request: Request) -> Response:
    nonce = request.query_params.get("nonce", "")
    if not _NONCE.fullmatch(nonce):
        raise ApiError(422, "query parameter 'nonce' must be 32 to 128 lowercase hex characters")
    host, port = request.scope.get("server") or ("", 0)
    proof = key_proof(state_of(request).api_key, nonce, f"{host}:{port}")
    return JSONResponse({"service": SERVICE, "proof": proof})


proof_routes = [Route(PROOF_PATH, key_proof_answer, methods=["GET"])]
