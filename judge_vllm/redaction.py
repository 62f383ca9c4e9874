"""Secrets never leave: one place that knows them and scrubs every text that goes out.

Secrets are API keys and the userinfo of judge URLs (``http://user:pass@host``). Configs register
them when they are built (``register_secret``); ``scrub`` replaces each with ``***`` in every form
a text may show it (``secret_forms``: as is, stripped, escaped by ``repr`` of the text or of its
UTF-8 bytes, JSON-escaped, URL-encoded), including a fragment of one cut by a text cut
("sk-abc[... 12 chars cut ...]") or at a text's end, and replaces the userinfo of any URL, known
or not. ``redact_url`` shows a URL without its userinfo.
``install_log_redaction`` scrubs every log record of the process as it is made (httpx's and
openai's own INFO and DEBUG lines included): a record factory, so that no handler or child
logger is missed.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from urllib.parse import quote, quote_plus

import httpx

__all__ = [
    "install_log_redaction",
    "redact_url",
    "register_secret",
    "register_url_secrets",
    "scrub",
    "secret_forms",
]

MASK = "***"
# Shorter values are not secrets worth a pattern ("", "x", a port).
MIN_SECRET_CHARS = 6
# A fragment this long of a secret, cut at a text's edge, still counts.
MIN_FRAGMENT_CHARS = 6
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]+@")
_lock = threading.Lock()
_secrets: set[str] = set()
_forms: set[str] = set()
_pattern: re.Pattern[str] | None = None


def secret_forms(secret: str) -> set[str]:
    """Every way a text may show ``secret``: as is and stripped; escaped as ``repr`` shows it in a
    str or in bytes (an ``Illegal header value b'Bearer ...\\n'`` error), as JSON writes it (either
    ASCII or not) and as a URL carries it (``%XX``, ``+`` for space). Forms shorter than
    ``MIN_SECRET_CHARS`` are left out."""
    forms = set()
    for text in (secret, secret.strip()):
        forms |= {
            text,
            repr(text)[1:-1],
            repr(text.encode("utf-8", "surrogatepass"))[2:-1],
            json.dumps(text)[1:-1],
            json.dumps(text, ensure_ascii=False)[1:-1],
            quote(text, safe="", errors="surrogatepass"),
            quote_plus(text, safe="", errors="surrogatepass"),
        }
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def _edge_pieces(secret: str) -> tuple[list[str], list[str]]:
    """The secret's proper prefixes and suffixes down to ``MIN_FRAGMENT_CHARS``, longest first."""
    lengths = range(len(secret) - 1, min(MIN_FRAGMENT_CHARS, len(secret)) - 1, -1)
    return [secret[:n] for n in lengths], [secret[-n:] for n in lengths]


def _compile(secrets: set[str]) -> re.Pattern[str]:
    """Whole secrets anywhere; a prefix where text was cut after it (a cut marker or the end), a
    suffix where text was cut before it (a cut marker or the start)."""
    whole = "|".join(re.escape(s) for s in sorted(secrets, key=len, reverse=True))
    pieces = [_edge_pieces(s) for s in secrets]
    prefixes = "|".join(re.escape(p) for ps, _ in pieces for p in ps)
    suffixes = "|".join(re.escape(x) for _, xs in pieces for x in xs)
    cut = r"(?:\[\.\.\.[^\]]*\]|\.\.\.|…)"
    parts = [f"(?:{whole})"]
    if prefixes:
        parts.append(rf"(?:{prefixes})(?=\s?{cut}|\s*$)")
    if suffixes:
        after_cut = r"(?:^|(?<=\])|(?<=\] )|(?<=…)|(?<=… )|(?<=\.\.\.)|(?<=\.\.\. ))"
        parts.append(rf"{after_cut}(?:{suffixes})")
    return re.compile("|".join(parts))


def register_secret(secret: str | None) -> None:
    """Scrub ``secret``, in each of its ``secret_forms``, from every text from now on (values
    under ``MIN_SECRET_CHARS`` are ignored)."""
    global _pattern
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return
    with _lock:
        if secret in _secrets:
            return
        _secrets.add(secret)
        _forms.update(secret_forms(secret))
        _pattern = _compile(_forms)
    install_log_redaction()


def register_url_secrets(url: str) -> None:
    """Register the password and user of a URL's userinfo (``http://user:pass@host``), and scrub
    log records from now on even when both are too short to register: the record factory replaces
    any URL's userinfo (httpx logs each request's URL with it)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return
    register_secret(parsed.password)
    register_secret(parsed.username)
    if parsed.userinfo:
        install_log_redaction()


def scrub(text: str) -> str:
    """``text`` without any registered secret (whole or cut) nor any URL userinfo."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", text) if "@" in text else text
    pattern = _pattern
    return pattern.sub(MASK, text) if pattern is not None else text


def redact_url(url: str) -> str:
    """``url`` with its userinfo, if any, shown as ``***``."""
    return _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", url)


_installed = False


def install_log_redaction() -> None:
    """Scrub every log record made in this process from now on (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        previous = logging.getLogRecordFactory()

    def scrubbed_record(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _pattern is None and not record.args and "@" not in str(record.msg) and not record.exc_info:
            return record
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(scrubbed_record)
