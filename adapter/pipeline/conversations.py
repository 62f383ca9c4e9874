"""Conversations as the judge reads them: chat messages (TRL's conversational format) to text.

A prompt or completion is plain text or a list of ``{"role", "content"}`` messages, where
``content`` is a string or a multimodal list of parts (only the text parts are read). A
completion that uses tools is read as a trajectory instead (``adapter.pipeline.trajectory``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

__all__ = ["content_text", "message_text", "prompt_text"]


def message_text(value: object, role: str) -> str:
    """The text of a plain prompt or completion, or the joined ``role`` contents of a conversation."""
    messages = _messages(value)
    if messages is None:
        return _as_text(value)
    return "\n\n".join(content_text(m.get("content")) for m in messages if m.get("role") == role)


def prompt_text(prompt: object) -> str:
    """What the judge is shown as the prompt: plain text as is, a lone user turn as its text,
    any other conversation as a transcript of ``role: text`` turns (system prompt and earlier
    turns included) separated by blank lines; an assistant turn's tool calls as
    ``name(arguments)`` lines after its text. Empty turns are left out.

    The judge's ``max_prompt_chars`` bounds it, keeping its start and, mostly, its end: the
    system prompt's opening and the last user turn.
    """
    messages = _messages(prompt)
    if messages is None:
        return _as_text(prompt)
    turns = [(str(m.get("role")), _turn_text(m)) for m in messages]
    turns = [(role, text) for role, text in turns if text]
    if len(turns) == 1 and turns[0][0] == "user":
        return turns[0][1]
    return "\n\n".join(f"{role}: {text}" for role, text in turns)


def _messages(value: object) -> list[Mapping[str, object]] | None:
    """The messages of a conversation (one message dict counts as one), or None for plain text
    and anything else; items of a conversation that are not messages are left out."""
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return None
    return [m for m in value if isinstance(m, Mapping)]


def _as_text(value: object) -> str:
    """Plain text as is; None as empty; anything else as its ``str`` (the pre-checks judge it)."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def _turn_text(message: Mapping[str, object]) -> str:
    """A prompt turn's text: its content, then its tool calls, one ``name(arguments)`` line each
    (calls that are not ``{"function": {"name", "arguments"}}`` mappings are left out)."""
    lines = [content_text(message.get("content"))]
    calls = message.get("tool_calls")
    if isinstance(calls, Sequence) and not isinstance(calls, str | bytes):
        for call in calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                arguments = function.get("arguments")
                shown = (
                    arguments if isinstance(arguments, str)
                    else "" if arguments is None
                    else json.dumps(arguments, ensure_ascii=False, default=str)
                )  # fmt: skip
                lines.append(f"{function['name']}({shown})")
    return "\n".join(line for line in lines if line)


def content_text(content: object) -> str:
    """A message's content: a string, or the text parts of a multimodal content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence):
        return _as_text(content)
    return "\n".join(
        _as_text(part.get("text")) for part in content if isinstance(part, Mapping) and part.get("type") == "text"
    )
