"""Judge prompt templates: one system prompt with a rubric per answer_type, one user prompt.

Layout for vLLM's prefix cache: the system message (role, scale, rubric, output contract)
is fixed per (answer_type, mode) and comes first; everything that varies per request
(question, reference, the graded response) comes last, in the user message.

The graded response is wrapped in tags carrying a per-request random nonce, and anything
in it that could close those tags or open a chat-template turn is neutralised, so it
stays data. Templates are rendered in a sandbox with ``StrictUndefined``; request text is
only ever passed as variables, never compiled as a template.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = [
    "RUBRICS",
    "JudgePrompt",
    "clip_middle",
    "neutralise",
    "render_prompt",
    "rubric_for",
    "template_version",
]

logger = logging.getLogger(__name__)

TEMPLATE_DIR = Path(__file__).parent
DEFAULT_RUBRIC = "default"
RUBRICS: dict[str, str] = {
    "NUMBER": "number",
    "MATH_EXPRESSIONS": "math_expressions",
    "MULTIPLE_CHOICE": "multiple_choice",
    "TEXT": "text",
}

Mode = Literal["verdict", "fast"]

# 8 random lowercase letters (37.6 bits): unguessable by a completion written before it
# is drawn, and fewer tokens than hex (many tokenizers split digits one per token), which
# matters because the tags are part of every request's uncached prompt.
_NONCE_LETTERS = string.ascii_lowercase
_NONCE_LENGTH = 8


def _new_nonce() -> str:
    """A fresh random tag nonce."""
    value = secrets.randbelow(len(_NONCE_LETTERS) ** _NONCE_LENGTH)  # one draw, not one per letter
    letters = []
    for _ in range(_NONCE_LENGTH):
        value, digit = divmod(value, len(_NONCE_LETTERS))
        letters.append(_NONCE_LETTERS[digit])
    return "".join(letters)


_env = ImmutableSandboxedEnvironment(
    loader=FileSystemLoader(TEMPLATE_DIR),
    undefined=StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    auto_reload=False,  # fixed for the process, like template_version(): no stat() per render
)

# Anything that could close our response tag, or open a chat turn / special token of a
# common chat template (ChatML, Llama 3, Gemma, Mistral), is defused by a zero-width break.
_BREAK = "\u200b"
_DANGEROUS = re.compile(r"(</?)(response)|(<\|)|(\|>)|(<(?:start|end)_of_turn>)|(\[/?INST\])", re.IGNORECASE)


def neutralise(text: str) -> str:
    """Defuse closing tags and chat-template control sequences inside graded text."""

    def _defuse(match: re.Match[str]) -> str:
        token = match.group(0)
        return token[0] + _BREAK + token[1:]

    return _DANGEROUS.sub(_defuse, text)


def rubric_for(answer_type: str | None) -> str:
    """The rubric template name for an answer_type; unknown types use the default rubric."""
    if answer_type is None:
        return DEFAULT_RUBRIC
    name = RUBRICS.get(answer_type.upper())
    if name is None:
        logger.debug("unknown answer_type %r: using the default rubric", answer_type)
        return DEFAULT_RUBRIC
    return name


def clip_middle(text: str, max_chars: int) -> str:
    """Cut ``text`` to about ``max_chars``, keeping its start and, mostly, its end.

    The final answer sits at the end of a completion, so three quarters of the budget
    go to the tail; a marker says how much was left out.
    """
    if len(text) <= max_chars:
        return text
    head = max_chars // 4
    tail = max_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}"


@cache
def template_version() -> str:
    """A short hash of every template's text: it changes whenever any template changes."""
    digest = hashlib.sha256()
    for path in sorted(TEMPLATE_DIR.glob("*.j2")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class JudgePrompt:
    """Chat messages for one judge call: a fixed system message, then the request's data."""

    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        """The OpenAI chat ``messages`` list."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@cache
def _system_prompt(rubric: str, mode: Mode, aspects: bool) -> str:
    return _env.get_template("system.j2").render(rubric=f"{rubric}.j2", mode=mode, aspects=aspects)


def render_prompt(
    prompt: str,
    completion: str,
    answer: str,
    answer_type: str | None = None,
    *,
    mode: Mode = "verdict",
    aspects: bool = False,
    nonce: str | None = None,
    max_prompt_chars: int = 4000,
    max_completion_chars: int = 6000,
) -> JudgePrompt:
    """Render the judge's messages for one request, clipping overlong texts."""
    rubric = rubric_for(answer_type)
    user = _env.get_template("user.j2").render(
        prompt=neutralise(clip_middle(prompt, max_prompt_chars)),
        answer=neutralise(clip_middle(answer, max_prompt_chars)),
        completion=neutralise(clip_middle(completion, max_completion_chars)),
        nonce=nonce or _new_nonce(),
        rubric_name=rubric.upper(),
    )
    return JudgePrompt(system=_system_prompt(rubric, mode, aspects), user=user)
