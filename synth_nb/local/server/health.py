"""Routes about the service itself: ``/health``, and a plain 404 for the orchestration routes.

``synth-ai`` 0.2.24 looks a job up under ``/orchestration/jobs/…`` when the flow's own path fails; that
family does not exist here, so it answers a 404 that says where to look instead.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.key_files import SERVICE
from synth_nb.local.lifecycle import utc_now

__all__ = ["routes"]


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok", "healthy": True, "service": SERVICE, "time": utc_now()})


async def orchestration(request: Request) -> Response:
    raise ApiError(404, "orchestration jobs do not exist on the local backend; use the flow's own job routes")


routes = [
    Route("/health", health, methods=["GET"]),
    Route("/orchestration/jobs/{job_id}", orchestration, methods=["GET"]),
    Route("/orchestration/jobs/{job_id}/events", orchestration, methods=["GET"]),
]
