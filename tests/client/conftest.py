"""The in-test backend and fault transport of ``tests/fake_backend.py``, as fixtures here."""

from fake_backend import fake_backend, faulty_transport, no_backoff  # noqa: F401
