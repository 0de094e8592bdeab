"""Command line: ``synth-nb train | backend | task-app | attach | jobs | enable``."""

import sys

# why: ``import httpx`` also imports httpx's own command line client (click, rich, pygments) whenever they
# are installed: a quarter of the backend's start-up imports, never used by these commands. Their
# processes (this CLI and the backend it starts) skip it; ``httpx.main`` then only says it is unavailable.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
