"""Banking intent classification: a bundled task app and the dataset written for it (``data.json``)."""

from synth_nb.local.examples.banking.app import APP_ID, create_app
from synth_nb.local.examples.banking.dataset import load_dataset

__all__ = ["APP_ID", "create_app", "load_dataset"]
