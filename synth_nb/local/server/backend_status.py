"""``GET /local-backend``: which process this is, its data folder, its jobs by status and its example apps.

``synth-nb backend --status`` prints it, and a kernel checks the ``pid`` against the info file before it
reuses (or stops) the process the file names: a pid the system gave to another program since is never
signalled. ``?jobs=0`` leaves the job counts out (the cheap answer a kernel asks for).
"""

from __future__ import annotations

import os
from collections import Counter

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.examples import TASK_APPS, task_app_path
from synth_nb.local.server.state import state_of

__all__ = ["SERVICE", "routes"]

SERVICE = "synth-nb-local-backend"
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
    return JSONResponse(answer)


routes = [Route("/local-backend", backend_status, methods=["GET"])]
