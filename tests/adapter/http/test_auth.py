"""Bearer auth: a constant-time check, on every endpoint but /health, before the body is read."""

from __future__ import annotations

import logging

import httpx
import pytest
from pydantic import SecretStr

from adapter.http import create_app
from adapter.http.auth import bearer_token_ok
from adapter.http.run import api_key_given
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.asgi_server import ApiServer

KEY = "test-key-7f3a9c"
UNICODE_KEY = "clé-секрет"
ITEM = {"prompt": "2+2?", "completion": "It is 4.", "answer": "4"}


@pytest.mark.parametrize(
    ("key", "header", "ok"),
    [
        (KEY, f"Bearer {KEY}".encode(), True),
        (KEY, f"bearer {KEY}".encode(), True),
        (KEY, f"Bearer  {KEY} ".encode(), True),
        (KEY, f"Bearer {KEY}x".encode(), False),
        (KEY, f"Bearer {KEY[:-1]}".encode(), False),
        (KEY, f"Basic {KEY}".encode(), False),
        (KEY, KEY.encode(), False),
        (KEY, b"", False),
        (KEY, None, False),
        (UNICODE_KEY, f"Bearer {UNICODE_KEY}".encode(), True),
        (UNICODE_KEY, f"Bearer {UNICODE_KEY}".encode().decode("latin-1").encode("utf-8"), False),
        ("clé", "Bearer clé".encode("latin-1"), False),
    ],
)
def test_bearer_token_ok_compares_the_raw_header_to_the_utf8_key(key, header, ok):
    assert bearer_token_ok(header, SecretStr(key)) is ok


@pytest.mark.parametrize("key", ["new\nline", "nul\x00", "tab\tinside", "lone-\ud800"])
def test_a_key_no_client_could_send_is_a_config_error(key):
    with pytest.raises(JudgeConfigError, match="api_key") as caught:
        create_app({}, api_key=key)
    assert key not in str(caught.value)


@pytest.mark.parametrize("key", ["", " ", "\n", "\r\n\t"], ids=["empty", "space", "newline", "whitespace"])
def test_an_empty_key_is_refused_never_auth_off(key):
    with pytest.raises(JudgeConfigError, match=r"the API key is empty .* which would serve without auth"):
        create_app({}, api_key=key)


@pytest.mark.parametrize(
    ("flag", "environment", "where"),
    [("", "set-but-not-used", "--api-key"), (None, "", "JUDGE_API_KEY"), (None, " \n", "JUDGE_API_KEY")],
    ids=["empty-flag", "empty-variable", "whitespace-variable"],
)
def test_judge_vllm_api_refuses_an_empty_key_naming_where_it_came_from(flag, environment, where):
    with pytest.raises(JudgeConfigError, match=f"{where} is given but empty, which would serve without auth"):
        api_key_given(flag, environment)


def test_judge_vllm_api_takes_the_flag_then_the_variable_then_no_auth():
    assert [api_key_given("flag-key", "env-key"), api_key_given(None, "env-key"), api_key_given(None, None)] == [
        "flag-key",
        "env-key",
        None,
    ]


@pytest.mark.parametrize("padding", [" ", "\n", "\r\n", "\t"], ids=["space", "newline", "crlf", "tab"])
def test_a_key_read_with_surrounding_whitespace_is_stripped(fake_judge, reward_config, padding):
    with ApiServer(create_app(reward_config(fake_judge.url), api_key=f"{padding}{KEY}{padding}")) as server:
        right = httpx.post(f"{server.url}/judge", json=ITEM, headers={"Authorization": f"Bearer {KEY}"})
        unkeyed = httpx.post(f"{server.url}/judge", json=ITEM)
    assert (right.status_code, unkeyed.status_code) == (200, 401)


def test_a_non_ascii_key_sent_as_utf8_is_accepted(fake_judge, reward_config):
    with ApiServer(create_app(reward_config(fake_judge.url), api_key=UNICODE_KEY)) as server:
        right = httpx.post(
            f"{server.url}/judge", json=ITEM, headers={"Authorization": f"Bearer {UNICODE_KEY}".encode()}
        )
        wrong = httpx.post(
            f"{server.url}/judge", json=ITEM, headers={"Authorization": "Bearer clé-секрeт".encode()}
        )
    assert (right.status_code, wrong.status_code) == (200, 401)


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


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/judge"),
        ("POST", "/batch_judge"),
        ("GET", "/metrics"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
        ("GET", "/no-such-path"),
        ("GET", "/health/"),
        ("GET", "/%6Detrics"),
    ],
)
def test_every_path_but_health_needs_the_key(secured, api_key, method, path):
    assert httpx.request(method, f"{secured.url}{path}").status_code == 401
    authorized = httpx.request(method, f"{secured.url}{path}", headers={"Authorization": f"Bearer {api_key}"})
    assert authorized.status_code != 401


def test_auth_is_checked_before_the_body_is_read(secured):
    reply = httpx.post(
        f"{secured.url}/judge", content=b"{broken", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 401


def test_auth_off_needs_no_header(api):
    assert httpx.post(f"{api.url}/judge", json=ITEM).status_code == 200
    assert httpx.get(f"{api.url}/metrics").status_code == 200
