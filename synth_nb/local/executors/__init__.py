"""Executors run jobs for the local backend; one module per kind of job."""
