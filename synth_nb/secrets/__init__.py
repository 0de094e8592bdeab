"""Secrets: resolution from --env-file / environment / .env / Modal, held as SecretStr, always masked."""

from synth_nb.secrets._mask import mask, mask_text

__all__ = ["mask", "mask_text"]
