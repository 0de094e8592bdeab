"""The notebook layer: ``%synth_train`` and its wizard (``magics``, ``wizard``), the live monitor panel
(``panel``, ``chart``). It only composes the library; importing it loads no widget or IPython code.
"""
