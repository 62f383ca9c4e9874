"""Judge prompt templates: one folder per judge profile under ``profiles/``.

A profile's folder holds its Jinja templates (and its ``profile.yaml``, read by
``judge_vllm.profiles``): for the chat endpoint an optional system template and a user
template, for the completions endpoint one prompt template. Our own ``rubric`` profile
has one system prompt with a rubric per answer_type and one user prompt. The rubrics of the four
built-in answer types are files of its folder; another type's rubric is registered at run time
(``register_rubric``: the adapter's answer-type registry registers each type's judge hints) and is
a template of that folder from then on, for rendering and for the fingerprints alike.

Layout for vLLM's prefix cache: what is fixed per (profile, answer_type) comes first;
everything that varies per request (question, reference, the graded response) comes last.

In our rubric the graded response is wrapped in tags carrying a per-request random nonce.
In every profile, anything in request text that could close those tags or open a
chat-template turn is neutralised, so it stays data. Templates are rendered in a sandbox
with ``StrictUndefined``; request text is only ever passed as variables, never compiled as
a template.
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
from typing import TYPE_CHECKING, Literal

from jinja2 import BaseLoader, ChoiceLoader, DictLoader, FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = [
    "PROFILES_DIR",
    "RUBRICS",
    "SHARED_DIR",
    "JudgePrompt",
    "clip_middle",
    "neutralise",
    "new_nonce",
    "register_rubric",
    "render_prompt",
    "render_template",
    "rubric_for",
    "template_fingerprint",
    "template_version",
]

logger = logging.getLogger(__name__)

PROFILES_DIR = Path(__file__).parent / "profiles"
RUBRIC_DIR = PROFILES_DIR / "rubric"
# Templates that profiles' prompts share (an agent trajectory's steps: ``trace.j2``).
SHARED_DIR = Path(__file__).parent / "shared"
DEFAULT_RUBRIC = "default"
# answer_type -> its rubric's template name (no ".j2"): the built-in types' files, then the
# registered ones (``register_rubric``).
RUBRICS: dict[str, str] = {
    "NUMBER": "number",
    "MATH_EXPRESSIONS": "math_expressions",
    "MULTIPLE_CHOICE": "multiple_choice",
    "TEXT": "text",
}
# A registered rubric's template name (with ".j2") -> its source: templates of RUBRIC_DIR that
# live in memory, not on disk.
_REGISTERED: dict[str, str] = {}
_ANSWER_TYPE_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")

Mode = Literal["verdict", "fast", "binary"]

# 8 random lowercase letters (37.6 bits): unguessable by a completion written before it
# is drawn, and fewer tokens than hex (many tokenizers split digits one per token), which
# matters because the tags are part of every request's uncached prompt.
_NONCE_LETTERS = string.ascii_lowercase
_NONCE_LENGTH = 8


def new_nonce() -> str:
    """A fresh random tag nonce."""
    value = secrets.randbelow(len(_NONCE_LETTERS) ** _NONCE_LENGTH)  # one draw, not one per letter
    letters = []
    for _ in range(_NONCE_LENGTH):
        value, digit = divmod(value, len(_NONCE_LETTERS))
        letters.append(_NONCE_LETTERS[digit])
    return "".join(letters)


@cache
def _environment(template_dir: Path) -> ImmutableSandboxedEnvironment:
    loader: BaseLoader = FileSystemLoader(template_dir)
    if template_dir.resolve() == RUBRIC_DIR.resolve():  # the registered rubrics are its templates
        loader = ChoiceLoader([loader, DictLoader(_REGISTERED)])
    return ImmutableSandboxedEnvironment(
        loader=loader,
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,  # a file's one last newline is not part of its text
        auto_reload=False,  # fixed for the process, like template_version(): no stat() per render
    )


def render_template(template_dir: Path, name: str, **variables: object) -> str:
    """Render template ``name`` from ``template_dir`` (an absolute path) in the sandbox, with
    ``StrictUndefined``."""
    return _environment(template_dir).get_template(name).render(**variables)


# Anything that could close one of our tags (the response's, a trajectory step's), or open a chat
# turn / special token of a common chat template (ChatML, Llama 3, Gemma, Mistral), is defused by
# a zero-width break.
_BREAK = "\u200b"
_DANGEROUS = re.compile(
    r"(</?)(response|agent-text|tool-call|tool-result)|(<\|)|(\|>)|(<(?:start|end)_of_turn>)|(\[/?INST\])",
    re.IGNORECASE,
)


def neutralise(text: str) -> str:
    """Defuse closing tags and chat-template control sequences inside graded text."""

    def _defuse(match: re.Match[str]) -> str:
        token = match.group(0)
        return token[0] + _BREAK + token[1:]

    return _DANGEROUS.sub(_defuse, text)


def register_rubric(answer_type: str, hints: str) -> None:
    """Give ``answer_type`` (an upper-case name) a rubric: the judge is shown "Rubric for
    <answer_type> answers:" and then ``hints`` (plain text, never read as a template) wherever a
    built-in type's rubric goes. Registering the same hints again changes nothing; other hints for
    a type that has a rubric, or a name that one of the rubric folder's files has, are a
    ``ValueError``."""
    if not _ANSWER_TYPE_NAME.fullmatch(answer_type):
        raise ValueError(f"answer_type {answer_type[:64]!r} is not an upper-case name (A-Z, 0-9, _)")
    name = answer_type.lower()
    template = f"{name}.j2"
    if not hints.strip() or "{% endraw" in hints:
        raise ValueError(f"the judge hints of {answer_type} are empty or hold '{{% endraw'")
    source = f"{{% raw %}}Rubric for {answer_type} answers:\n{hints.strip()}{{% endraw %}}"
    if RUBRICS.get(answer_type) == name and _REGISTERED.get(template) == source:
        return
    if answer_type in RUBRICS or (RUBRIC_DIR / template).exists():
        raise ValueError(f"answer_type {answer_type} already has a rubric ({RUBRIC_DIR.name}/{template})")
    _REGISTERED[template] = source
    RUBRICS[answer_type] = name
    _environment.cache_clear()  # templates are looked up once per environment
    _system_prompt.cache_clear()
    template_version.cache_clear()


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


# What a profile folder holds that a judge prompt is made of; anything else in it (notes, data,
# a model someone unpacked there) is never read.
FINGERPRINTED = ("*.j2", "profile.yaml")


def template_fingerprint(template_dir: Path) -> str:
    """A short hash of the templates (``*.j2``) and profile files in a folder (names and bytes),
    the registered rubrics too when the rubric folder is in it (as files of that folder)."""
    digest = hashlib.sha256()
    found = {
        p: p.read_bytes() for pattern in FINGERPRINTED for p in template_dir.rglob(pattern) if p.is_file()
    }
    rubrics = RUBRIC_DIR.resolve()
    if rubrics.is_relative_to(template_dir.resolve()):
        within = template_dir / rubrics.relative_to(template_dir.resolve())
        found |= {within / name: source.encode() for name, source in _REGISTERED.items()}
    for path in sorted(found):
        digest.update(path.relative_to(template_dir).as_posix().encode())
        digest.update(found[path])
    return digest.hexdigest()[:12]


@cache
def template_version() -> str:
    """A short hash of every bundled template and profile (the shared templates too): it changes
    whenever any of them changes."""
    return template_fingerprint(PROFILES_DIR.parent)


@dataclass(frozen=True)
class JudgePrompt:
    """One judge call's prompt: chat messages (an optional fixed system message, then the
    request's data as the user message), or for the completions endpoint ``user`` alone,
    sent raw without a chat template."""

    system: str | None
    user: str

    def messages(self) -> list[ChatCompletionMessageParam]:
        """The OpenAI chat ``messages`` list."""
        messages: list[ChatCompletionMessageParam] = []
        if self.system is not None:
            messages.append({"role": "system", "content": self.system})
        messages.append({"role": "user", "content": self.user})
        return messages

    @property
    def text(self) -> str:
        """Every character of the prompt (for size estimates)."""
        return (self.system or "") + self.user


@cache
def _system_prompt(rubric: str, mode: Mode, aspects: bool) -> str:
    labels = ["Yes", "No"] if mode == "binary" else [str(s) for s in range(1, 6)]
    output = "json" if mode == "verdict" else "label"
    return render_template(
        RUBRIC_DIR, "system.j2", rubric=f"{rubric}.j2", output=output, labels=labels, aspects=aspects
    )


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
    user = render_template(
        RUBRIC_DIR,
        "user.j2",
        prompt=neutralise(clip_middle(prompt, max_prompt_chars)),
        answer=neutralise(clip_middle(answer, max_prompt_chars)),
        completion=neutralise(clip_middle(completion, max_completion_chars)),
        nonce=nonce or new_nonce(),
        rubric_name=rubric.upper(),
        trace="",
    )
    return JudgePrompt(system=_system_prompt(rubric, mode, aspects), user=user)
