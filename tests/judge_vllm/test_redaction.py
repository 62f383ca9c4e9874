"""``judge_vllm.redaction``: registered secrets and URL credentials are scrubbed, whole or cut."""

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
