"""The package version, in a module of its own: the client names it in its User-Agent without importing
the package root (which points at the notebook extension)."""

from __future__ import annotations

__version__ = "0.1.0"
