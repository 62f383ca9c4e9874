"""A free loopback port, for tests, benchmarks and soaks: one to start a server on, or one nobody
listens on."""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (the OS picks it; the socket is closed).

    Another process may take it before it is used: a server started in this process binds port 0
    instead (``ApiServer`` does); this is for a server started as a command with ``--port``, or
    for a URL that must be refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
