"""The embedded local backend: a real HTTP server speaking the Synth backend contract.

Needs the ``local`` extra. Depends only on the public HTTP contract (like any external server would):
nothing here imports synth_nb's client, job monitor or notebook layers.
"""
