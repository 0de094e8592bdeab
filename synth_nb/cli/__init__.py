"""Command line: ``synth-nb train | backend | task-app | attach | jobs | enable``."""
