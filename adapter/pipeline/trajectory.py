"""Agent trajectories as input: chat messages with tool calls and tool results, read for the judge.

A completion given as OpenAI chat messages may hold assistant ``tool_calls``
(``{"id", "type": "function", "function": {"name", "arguments"}}``, arguments as JSON text or,
as TRL's tool-using GRPO passes them, a mapping) and ``role: tool`` messages (``tool_call_id``,
``name``, ``content``), optionally with the tool schemas the task offered (an item's
``tools``). Such a completion is read into its final reply, the content of its last message
when that is an assistant message without tool calls (what the rules grade, and the judge's
``completion``; none when the trajectory ends in a tool call or result), and a ``Trajectory``
of the steps before it (``judge_vllm.trajectory``). A conversation without tool use stays what
it was: the joined text of its assistant turns.

Input that cannot be read (a malformed tool call, arguments that are neither text nor a
mapping, an unknown role, with or without tool use, more than ``MAX_STEPS`` steps or
``MAX_TRAJECTORY_CHARS`` characters) is a ``TrajectoryError``: the facade turns it into a defined
reward (reason ``invalid_input``) whose explanation names the message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from adapter.pipeline.conversations import content_text, message_text
from judge_vllm.schemas import valid_unicode
from judge_vllm.trajectory import MAX_STEPS, CallStep, ResultStep, TextStep, ToolSpec, Trajectory

__all__ = [
    "MAX_TRAJECTORY_CHARS",
    "ReadCompletion",
    "TrajectoryError",
    "WrittenSpan",
    "hermes_messages",
    "is_messages",
    "read_completion",
    "tool_specs",
    "turn_text",
]

# A trajectory's characters, all steps together; a judge is shown a few thousand of them.
MAX_TRAJECTORY_CHARS = 20_000_000
_RESULT_ROLES = {"tool": "tool", "function": "tool", "user": "user", "system": "user"}
# A decoded multi-turn response in the Hermes tool format (Qwen's chat templates, verl's default
# multi_turn.format): calls in <tool_call> tags, results in <tool_response> tags inside the turns the
# chat template opens for them; with special tokens skipped, a turn's role is left as a bare line.
_HERMES_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_HERMES_RESULT = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.S)
_TURN_MARKS = re.compile(
    r"<\|im_(?:start|end)\|>|<\|(?:endoftext|eot_id|end_of_text|end)\|>|<end_of_turn>|</s>"
)
_ROLE_LINE = re.compile(
    r"^\s*(?:user|assistant|tool)[^\S\n]*(?:\n|$)|(?:^|\n)[^\S\n]*(?:user|assistant|tool)\s*$"
)


class TrajectoryError(ValueError):
    """A completion's messages or tools that cannot be read as a trajectory, and where."""


@dataclass(frozen=True)
class ReadCompletion:
    """A completion as read: its text (the final reply of a trajectory) and its trajectory, if any.
    ``completion`` is the input itself when it is not a list of messages (plain text, or a value
    the request's validation refuses)."""

    completion: object
    trajectory: Trajectory | None = None


def is_messages(value: object) -> bool:
    """Whether ``value`` is a list of chat messages (mappings with a role), or one message."""
    return _messages(value) is not None


def _messages(value: object) -> list[Mapping[str, object]] | None:
    """The chat messages ``value`` is (one message counts as a list of one), else None."""
    if isinstance(value, Mapping):
        return [value] if "role" in value else None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return None
    found = [m for m in value if isinstance(m, Mapping) and "role" in m]
    return found if len(found) == len(value) else None


def read_completion(completion: object, tools: object = None) -> ReadCompletion:
    """``completion`` read for the judge: a trajectory when its messages use tools or the task
    offered some (``tools``); else the joined assistant text of a conversation, or the input as
    it is. ``TrajectoryError`` for what cannot be read."""
    specs = tool_specs(tools)
    messages = _messages(completion)
    if messages is None:
        return ReadCompletion(completion, Trajectory(tools=specs) if specs else None)
    if len(messages) > MAX_STEPS:
        raise TrajectoryError(f"{len(messages)} messages: a trajectory has at most {MAX_STEPS}")
    for k, message in enumerate(messages):  # with or without tools: an unknown turn is never dropped
        _check_role(message.get("role"), k)
    if not specs and not any(_uses_tools(m) for m in messages):
        return ReadCompletion(message_text(messages, "assistant"))
    steps: list[TextStep | CallStep | ResultStep] = []
    final = ""
    for k, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            calls = _calls(message, k)
            text = valid_unicode(content_text(message.get("content")))
            if k == len(messages) - 1 and not calls:
                final = text
                continue
            if text.strip():
                steps.append(TextStep(text=text))
            steps.extend(calls)
        else:  # a known role (checked above) that is not the assistant's: a tool's or a user's result
            name = message.get("name")
            call_id = message.get("tool_call_id")
            steps.append(
                ResultStep(
                    content=valid_unicode(content_text(message.get("content"))),
                    name=valid_unicode(name) if isinstance(name, str) else "",
                    call_id=valid_unicode(call_id) if isinstance(call_id, str) else "",
                    role="tool" if _RESULT_ROLES[str(role)] == "tool" else "user",
                )
            )
        if len(steps) > MAX_STEPS:
            raise TrajectoryError(f"more than {MAX_STEPS} steps: a trajectory has at most {MAX_STEPS}")
    trajectory = Trajectory(steps=tuple(steps), tools=specs)
    if trajectory.chars + len(final) > MAX_TRAJECTORY_CHARS:
        raise TrajectoryError(
            f"{trajectory.chars + len(final):,} characters: a trajectory has at most {MAX_TRAJECTORY_CHARS:,}"
        )
    return ReadCompletion(final, trajectory)


def _check_role(role: object, k: int) -> None:
    """``TrajectoryError`` naming message ``k`` when its role is none the reader knows."""
    if role != "assistant" and not (isinstance(role, str) and role in _RESULT_ROLES):
        raise TrajectoryError(
            f"message {k} has role {str(role)[:40]!r}: expected assistant, tool, user or system"
        )


def _uses_tools(message: Mapping[str, object]) -> bool:
    return (
        bool(message.get("tool_calls"))
        or "function_call" in message
        or message.get("role") in ("tool", "function")
    )


def _calls(message: Mapping[str, object], k: int) -> list[CallStep]:
    """An assistant message's tool calls (``tool_calls``, or the legacy ``function_call``)."""
    calls = message.get("tool_calls")
    if calls is None:
        legacy = message.get("function_call")
        return [] if legacy is None else [_call_step(legacy, "", f"message {k}: function_call")]
    if isinstance(calls, str | bytes | Mapping) or not isinstance(calls, Sequence):
        raise TrajectoryError(f"message {k}: tool_calls is a {type(calls).__name__}, expected a list")
    steps = []
    for j, call in enumerate(calls):
        where = f"message {k}, tool call {j}"
        if not isinstance(call, Mapping):
            raise TrajectoryError(f"{where} is a {type(call).__name__}, expected a mapping")
        if call.get("type", "function") != "function":
            raise TrajectoryError(f"{where} has type {str(call.get('type'))[:40]!r}, expected 'function'")
        call_id = call.get("id")
        steps.append(
            _call_step(
                call.get("function"), valid_unicode(call_id) if isinstance(call_id, str) else "", where
            )
        )
    return steps


def _call_step(function: object, call_id: str, where: str) -> CallStep:
    """One call's ``{"name", "arguments"}``: arguments as JSON text, or a mapping (TRL's)."""
    if not isinstance(function, Mapping):
        raise TrajectoryError(f"{where} has no function {{name, arguments}}")
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TrajectoryError(f"{where}: the function's name must be non-empty text")
    if "arguments" not in function:
        raise TrajectoryError(f"{where}: the function {name[:40]!r} has no arguments")
    arguments = function["arguments"]
    if isinstance(arguments, Mapping):
        arguments = json.dumps(arguments, ensure_ascii=False, default=str)
    elif not isinstance(arguments, str):
        raise TrajectoryError(
            f"{where}: arguments of {name[:40]!r} are a {type(arguments).__name__}, "
            "expected JSON text or a mapping"
        )
    return CallStep(name=valid_unicode(name), arguments=valid_unicode(arguments), call_id=call_id)


def tool_specs(tools: object) -> tuple[ToolSpec, ...]:
    """The tools a task offered: OpenAI tool schemas (``{"type": "function", "function": {"name",
    "description", ...}}``), their inner ``function`` objects, or Python functions (as TRL takes
    them: name and docstring). None or an empty list: none."""
    if tools is None:
        return ()
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        raise TrajectoryError(f"tools is a {type(tools).__name__}, expected a list of tool schemas")
    specs = []
    for k, tool in enumerate(tools):
        if callable(tool) and not isinstance(tool, Mapping):
            doc = (getattr(tool, "__doc__", None) or "").strip().split("\n", 1)[0]
            specs.append(
                ToolSpec(
                    name=valid_unicode(str(getattr(tool, "__name__", "tool"))), description=valid_unicode(doc)
                )
            )
            continue
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(name, str) or not name.strip():
            raise TrajectoryError(f"tools[{k}] is not a tool schema with a function name")
        description = function.get("description")
        text = valid_unicode(description) if isinstance(description, str) else ""
        specs.append(ToolSpec(name=valid_unicode(name), description=text))
    return tuple(specs)


class WrittenSpan(NamedTuple):
    """A stretch of a decoded response and who wrote it: the policy (tokens it sampled) or the
    environment (tokens the trainer put in: a tool's result, an environment's reply). Only the
    trainer's record says which (verl's ``response_mask``, OpenRLHF's step arguments): text the
    policy wrote may look like anything, a tool's result included."""

    by_policy: bool
    text: str


def hermes_messages(spans: Sequence[WrittenSpan]) -> list[dict[str, object]] | None:
    """A multi-turn response in the Hermes tool format as chat messages, read by who wrote each
    span. In the policy's spans, each ``<tool_call>`` JSON is a tool call and the rest its text:
    a ``<tool_response>`` the policy wrote is its own text, never a tool's result. In the
    environment's, each ``<tool_response>`` is a tool result (any other text, when there is none,
    the environment's reply as a user turn). The policy's text after the last environment span is
    the final reply. None when no span holds a call or the environment's turn (nothing to read as
    steps). A call that is not ``{"name", "arguments"}`` JSON stays in the text, as written."""
    messages: list[dict[str, object]] = []
    calls: list[dict[str, object]] = []
    written: list[str] = []
    stepped = False

    def turn_ends() -> None:
        said = turn_text("".join(written))
        if said or calls:
            messages.append(
                {"role": "assistant", "content": said, **({"tool_calls": list(calls)} if calls else {})}
            )
        written.clear()
        calls.clear()

    for span in spans:
        if not span.by_policy:
            turn_ends()
            answered = _environment_messages(span.text)
            stepped = stepped or bool(answered)
            messages.extend(answered)
            continue
        position = 0
        for found in _HERMES_CALL.finditer(span.text):
            written.append(span.text[position : found.start()])
            position = found.end()
            call = _hermes_call(found.group(1))
            if call is None:
                written.append(found.group(0))
            else:
                stepped = True
                calls.append(call)
        written.append(span.text[position:])
    turn_ends()
    return messages if stepped else None


def _environment_messages(text: str) -> list[dict[str, object]]:
    """What the environment put in a response: its ``<tool_response>`` turns as tool results,
    else the text of its turn (without the chat template's marks) as its reply."""
    results: list[dict[str, object]] = [
        {"role": "tool", "content": found.group(1)} for found in _HERMES_RESULT.finditer(text)
    ]
    if results:
        return results
    reply = turn_text(text)
    return [{"role": "user", "content": reply}] if reply else []


def turn_text(text: str) -> str:
    """A turn's text without the chat template's marks (``<|im_start|>``, ``<|im_end|>``) and the
    bare role line a turn opens with once special tokens are skipped."""
    return _ROLE_LINE.sub("", _TURN_MARKS.sub("", text)).strip()


def _hermes_call(body: str) -> dict[str, object] | None:
    """One ``<tool_call>`` body as an OpenAI tool call, or None when it is not one."""
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str):
        return None
    arguments = parsed.get("arguments", {})
    if not isinstance(arguments, str | dict):
        return None
    return {"type": "function", "function": {"name": parsed["name"], "arguments": arguments}}
