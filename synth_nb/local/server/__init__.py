"""The local backend's HTTP layer (Starlette); ``app.create_app`` builds it.

Nothing is imported here, so the request readers in ``http`` load without the rest of the server.
"""
