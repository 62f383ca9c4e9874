"""``judge_vllm.redaction``: registered secrets and URL credentials are scrubbed, whole or cut."""

import json
from urllib.parse import quote, quote_plus

import pytest

from judge_vllm.redaction import redact_url, register_secret, scrub

KEY = "sk-redaction-test-key-0987654321"
register_secret(KEY)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Bearer {KEY}", "Bearer ***"),
        (f"head {KEY[:10]} [... 80 chars cut ...] {KEY[-10:]} tail", "head *** [... 80 chars cut ...] *** tail"),
        (f"cut at the end {KEY[:9]}", "cut at the end ***"),
        (f"{KEY[-9:]} at the start", "*** at the start"),
        ("see http://u:p4ss@judge:8888/v1", "see http://***@judge:8888/v1"),
        ("nothing to hide: sk-r and http://judge:8888", "nothing to hide: sk-r and http://judge:8888"),
    ],
    ids=["whole", "split-by-a-cut", "cut-at-end", "cut-at-start", "url-userinfo", "untouched"],
)
def test_scrub(text, expected):
    assert scrub(text) == expected


def test_a_fragment_inside_running_text_is_left_alone():
    # Only a cut makes a fragment suspicious; "sk-redac" mid-sentence is not the key.
    assert scrub("the prefix sk-redaction-t is documented") == "the prefix sk-redaction-t is documented"


def test_short_values_are_not_secrets():
    register_secret("abc")
    assert scrub("abc abc") == "abc abc"


def test_redact_url_keeps_everything_but_the_credentials():
    assert redact_url("https://user:pass@host:443/v1?x=1") == "https://***@host:443/v1?x=1"
    assert redact_url("http://host:8888") == "http://host:8888"


ODD_KEY = 'sk-odd "quoted" \\ back+slash é\n'  # every escape a text could apply to it
register_secret(ODD_KEY)


@pytest.mark.parametrize(
    "shown",
    [
        ODD_KEY,
        ODD_KEY.strip(),
        repr(ODD_KEY)[1:-1],
        repr(ODD_KEY.encode())[2:-1],
        json.dumps(ODD_KEY)[1:-1],
        json.dumps(ODD_KEY, ensure_ascii=False)[1:-1],
        quote(ODD_KEY, safe=""),
        quote_plus(ODD_KEY, safe=""),
    ],
    ids=["raw", "stripped", "repr", "bytes-repr", "json", "json-unicode", "url", "url-plus"],
)
def test_every_form_of_a_registered_secret_is_scrubbed(shown):
    assert scrub(f"error: Illegal header value b'Bearer {shown}' (sent {shown}) end") == (
        "error: Illegal header value b'Bearer ***' (sent ***) end"
    )
