"""ASGI middleware of the HTTP front ends: the body limit (413) and request observation.

Plain ASGI rather than Starlette's ``BaseHTTPMiddleware``, so a rejection never reads the body
and a streamed body is counted as it arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "ASGIApp",
    "BodyLimitMiddleware",
    "Message",
    "ObserveMiddleware",
    "Receive",
    "Scope",
    "Send",
    "reject",
]


async def reject(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    detail: str,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Answer ``{"detail": detail}`` with ``status`` instead of calling the app."""
    response = JSONResponse({"detail": detail}, status_code=status, headers=dict(headers or {}))
    await response(scope, receive, send)


class BodyLimitMiddleware:
    """Answers 413 for bodies over ``max_bytes`` (declared or streamed), else replays the body."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"request body is larger than {self.max_bytes} bytes (max_body_bytes)"
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await reject(scope, receive, send, 413, too_large)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await reject(scope, receive, send, 413, too_large)
                return
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


class ObserveMiddleware:
    """Times every HTTP request and hands ``(path, status, seconds)`` to ``record``."""

    def __init__(self, app: ASGIApp, record: Callable[[str, int, float], None]) -> None:
        self.app = app
        self.record = record

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            self.record(scope["path"], status, time.perf_counter() - started)
