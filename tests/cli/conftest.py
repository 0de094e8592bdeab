"""The re-run and fork fixtures of ``tests/bundle_backend.py``: a signed-in folder and a backend without a
default executor; a test module that defines a fixture of the same name uses its own."""

from bundle_backend import backend_options, env_key, folder  # noqa: F401
