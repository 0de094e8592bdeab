"""The local backend's HTTP layer (Starlette); see ``app.create_app``."""

from synth_nb.local.server.app import close_app, create_app

__all__ = ["close_app", "create_app"]
