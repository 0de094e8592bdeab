"""Training configs: discovery, flow detection, parsing and validation for RL, SFT and prompt learning."""

from synth_nb.config.detect import Flow, detect_flow
from synth_nb.config.discover import DiscoveredConfig, discover_configs
from synth_nb.config.loader import LoadedConfig, load_config, load_config_text, validate_config
from synth_nb.config.rl import resolve_rl_model
from synth_nb.errors import ConfigError

__all__ = [
    "ConfigError",
    "DiscoveredConfig",
    "Flow",
    "LoadedConfig",
    "detect_flow",
    "discover_configs",
    "load_config",
    "load_config_text",
    "resolve_rl_model",
    "validate_config",
]
