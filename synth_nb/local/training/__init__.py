"""Worker-process code for the local SFT and RL executors (needs the ``train`` extra: torch, transformers).

The executors in ``synth_nb.local.executors`` never import torch themselves: they start
``python -m synth_nb.local.training.worker`` and talk to it over JSON lines, so a crash or an out-of-memory
kill in training can never take the backend down.
"""
