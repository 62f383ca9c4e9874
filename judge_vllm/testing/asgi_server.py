"""Run an ASGI app under uvicorn in a background thread on a loopback port (tests, benchmarks).

Binding port 0 picks a free port; ``url`` is known once ``start`` (or ``with``) returns:

    with ApiServer(create_app(config)) as server:
        httpx.get(f"{server.url}/health")
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping

import uvicorn

__all__ = ["ASGIApp", "ApiServer"]

SERVER_START_TIMEOUT_S = 30.0

Message = MutableMapping[str, object]
ASGIApp = Callable[
    [MutableMapping[str, object], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


class ApiServer:
    """Runs an ASGI app under uvicorn in a background thread; ``with`` starts and stops it."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        self._app = app
        self.host = host
        self.port = port
        self._log_level = log_level
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ApiServer:
        """Bind, start serving, and return once the app's lifespan has started."""
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(self._app, log_level=self._log_level, lifespan="on"))
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="asgi-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                sock.close()
                raise RuntimeError("the ASGI app did not start; see the uvicorn log above")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Shut down gracefully (the app's lifespan shutdown runs)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(SERVER_START_TIMEOUT_S)

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
