"""Sample configs shared by the config tests: the shipped synth-ai examples (MIT, see
fixtures/LICENSE-synth-ai) and minimal valid TOMLs."""

from __future__ import annotations

from pathlib import Path

from minimal_configs import MINIMAL_GEPA, MINIMAL_MIPRO, MINIMAL_RL, MINIMAL_SFT

__all__ = ["FIXTURES", "INVALID_EXAMPLES", "MINIMAL_GEPA", "MINIMAL_MIPRO", "MINIMAL_RL", "MINIMAL_SFT",
           "VALID_EXAMPLES"]

FIXTURES = Path(__file__).parent / "fixtures"

VALID_EXAMPLES = [
    "banking77_gepa.toml",
    "banking77_mipro.toml",
    "crafter_fft_4b.toml",
    "crafter_sft_qwen30b_lora.toml",
    "heartdisease_gepa_local.toml",
    "heartdisease_mipro_dspy.toml",
    "rl_from_base_qwen4b.toml",
]
INVALID_EXAMPLES = ["banking77_gepa_test.toml"]
