"""Training configs, whatever their flow: discovery, flow detection, parsing, validation, the model catalogue.

Each flow's own schema lives with the flow (``synth_nb.flows.<name>.config``); the names below load on
first use, so a flow can import ``synth_nb.config.shared`` without loading the loader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from synth_nb.errors import ConfigError

if TYPE_CHECKING:
    from synth_nb.config.detect import detect_flow
    from synth_nb.config.discover import DiscoveredConfig, discover_configs
    from synth_nb.config.loader import (
        LoadedConfig,
        config_path,
        load_config,
        load_config_text,
        validate_config,
    )

__all__ = [
    "ConfigError",
    "DiscoveredConfig",
    "LoadedConfig",
    "config_path",
    "detect_flow",
    "discover_configs",
    "load_config",
    "load_config_text",
    "validate_config",
]

_HOMES = {
    "detect_flow": "detect",
    "DiscoveredConfig": "discover",
    "discover_configs": "discover",
    "LoadedConfig": "loader",
    "config_path": "loader",
    "load_config": "loader",
    "load_config_text": "loader",
    "validate_config": "loader",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"synth_nb.config.{home}"), name)
