"""Bearer-token auth for the HTTP API: a constant-time check and the middleware that applies it."""

from __future__ import annotations

import hmac

from pydantic import SecretStr

from adapter.http.middleware import ASGIApp, Receive, Scope, Send, reject

__all__ = ["API_KEY_ENV", "OPEN_PATHS", "AuthMiddleware", "bearer_token_ok"]

API_KEY_ENV = "JUDGE_API_KEY"
OPEN_PATHS = frozenset({"/health"})


def bearer_token_ok(authorization: bytes | None, api_key: SecretStr) -> bool:
    """Does a raw ``Authorization`` header value carry the key (UTF-8 encoded, as clients send a
    non-ASCII key)? Constant-time in the token's content."""
    scheme, _, token = (authorization or b"").partition(b" ")
    expected = api_key.get_secret_value().encode()
    return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), expected)


class AuthMiddleware:
    """401 without ``Authorization: Bearer <key>`` on every path but ``open_paths``."""

    def __init__(self, app: ASGIApp, api_key: SecretStr | None, open_paths: frozenset[str] = OPEN_PATHS):
        self.app = app
        self.api_key = api_key
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self.api_key
        if (
            key is not None
            and scope["type"] == "http"
            and scope["path"] not in self.open_paths
            and not bearer_token_ok(dict(scope["headers"]).get(b"authorization"), key)
        ):
            detail = f"missing or invalid bearer token: send 'Authorization: Bearer <{API_KEY_ENV}>'"
            await reject(scope, receive, send, 401, detail, {"WWW-Authenticate": "Bearer"})
            return
        await self.app(scope, receive, send)
