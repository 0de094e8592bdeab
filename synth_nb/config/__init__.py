"""Training configs, whatever their flow: discovery, flow detection, parsing, validation.

It asks the flows (``synth_nb.flows``): each holds its own schema (``synth_nb.flows.<name>.config``,
built from ``synth_nb.flows.schema``) and the model catalogue is ``synth_nb.flows.catalogue``; no flow
imports this package.
"""

from __future__ import annotations

from synth_nb.config.detect import detect_flow
from synth_nb.config.discover import DiscoveredConfig, discover_configs
from synth_nb.config.loader import LoadedConfig, config_path, load_config, load_config_text, validate_config
from synth_nb.errors import ConfigError

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
