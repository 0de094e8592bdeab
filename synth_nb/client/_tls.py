"""The TLS context of every client of this process, whichever transport sends (httpx, or the standard library's
``http.client`` in ``synth_nb.client.plain``): one rule for which certificates are trusted.

httpx's rule (``httpx.create_ssl_context``), kept here so that a transport without httpx trusts exactly the same
certificates: the CA bundle named by ``SSL_CERT_FILE``, else the folder named by ``SSL_CERT_DIR``, else certifi's
bundle; certificates and host names are always verified.
"""

from __future__ import annotations

import functools
import os
import ssl

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The context, made once: loading the CA bundle costs 20-120 ms of CPU, paid once instead of per client (a
    comparison of 11 runs opens 11 clients; one job, one client). A context holds no connection's state and may
    serve many; ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are read when the first client is made."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi  # why here: only a client that verifies with the default bundle reads it

    return ssl.create_default_context(cafile=certifi.where())
