"""Bearer auth: a constant-time check, on every endpoint but /health, before the body is read."""

from __future__ import annotations

import logging

import httpx
import pytest
from pydantic import SecretStr

from adapter.http.auth import bearer_token_ok

KEY = "test-key-7f3a9c"
ITEM = {"prompt": "2+2?", "completion": "It is 4.", "answer": "4"}


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (f"Bearer {KEY}", True),
        (f"bearer {KEY}", True),
        (f"Bearer {KEY}x", False),
        (f"Bearer {KEY[:-1]}", False),
        (f"Basic {KEY}", False),
        (KEY, False),
        ("", False),
        (None, False),
    ],
)
def test_bearer_token_ok(header, ok):
    assert bearer_token_ok(header, SecretStr(KEY)) is ok


def test_auth_on_requires_the_bearer_key_but_health_stays_open(secured, api_key, caplog):
    caplog.set_level(logging.DEBUG)
    missing = httpx.post(f"{secured.url}/judge", json=ITEM)
    wrong = httpx.post(f"{secured.url}/judge", json=ITEM, headers={"Authorization": f"Bearer {api_key}-no"})
    right = httpx.post(f"{secured.url}/judge", json=ITEM, headers={"Authorization": f"Bearer {api_key}"})
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert missing.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in missing.json()["detail"]
    assert httpx.get(f"{secured.url}/metrics").status_code == 401
    assert httpx.post(f"{secured.url}/batch_judge", json={"requests": []}).status_code == 401
    assert httpx.get(f"{secured.url}/health").status_code == 200
    assert api_key not in missing.text + wrong.text + caplog.text


def test_auth_is_checked_before_the_body_is_read(secured):
    reply = httpx.post(
        f"{secured.url}/judge", content=b"{broken", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 401


def test_auth_off_needs_no_header(api):
    assert httpx.post(f"{api.url}/judge", json=ITEM).status_code == 200
    assert httpx.get(f"{api.url}/metrics").status_code == 200
