"""The notebook layer: ``%synth_train`` (``magics``, ``request``, ``launch``), its ``wizard``, the live monitor
``panel`` with its ``controls`` and ``chart``, and the kernel plumbing they share (``kernel_loop``,
``output_redirect``). Configs, secrets and submission go through ``synth_nb.pipeline``, like the CLI's.
Importing this package loads no widget or IPython code.
"""
