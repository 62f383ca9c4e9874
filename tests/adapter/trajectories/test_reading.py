"""Reading a completion's chat messages into its final reply and its trajectory (adapter/pipeline/trajectory.py)."""

from __future__ import annotations

import json
import re

import pytest

from adapter.pipeline.inputs import InvalidInput, build_request
from adapter.pipeline.trajectory import (
    TrajectoryError,
    WrittenSpan,
    hermes_messages,
    read_completion,
    tool_specs,
)
from judge_vllm.trajectory import MAX_STEPS, CallStep, ResultStep, TextStep, ToolSpec


def call(name: str, arguments: object, call_id: str | None = None) -> dict[str, object]:
    """An OpenAI tool call (TRL's carry a mapping as arguments, and no id)."""
    found: dict[str, object] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return found if call_id is None else {"id": call_id, **found}


def assistant(content: str | None, *calls: dict[str, object]) -> dict[str, object]:
    return {"role": "assistant", "content": content, **({"tool_calls": list(calls)} if calls else {})}


def tool(content: object, call_id: str | None = None, name: str = "calc") -> dict[str, object]:
    message: dict[str, object] = {"role": "tool", "name": name, "content": content}
    return message if call_id is None else {**message, "tool_call_id": call_id}


OPENAI = [
    {"role": "assistant", "content": "Let me compute.", "tool_calls": [call("calc", '{"x": "6*7"}', "c1")]},
    tool("42", "c1"),
    {"role": "assistant", "content": "It is 42."},
]
# As TRL's GRPOTrainer builds a tool-using completion: arguments a mapping, tool messages without ids.
TRL = [assistant(None, call("calc", {"x": "6*7"})), tool("42"), assistant("It is 42.")]


@pytest.mark.parametrize("messages", [OPENAI, TRL], ids=["openai", "trl"])
def test_a_tool_using_completion_is_its_final_reply_and_its_steps(messages):
    read = read_completion(messages)
    assert read.completion == "It is 42."
    assert read.trajectory is not None
    steps = read.trajectory.steps
    assert [s.kind for s in steps] == (
        ["text", "call", "result"] if messages is OPENAI else ["call", "result"]
    )
    called = next(s for s in steps if isinstance(s, CallStep))
    assert called.name == "calc" and json.loads(called.arguments) == {"x": "6*7"}
    assert next(s for s in steps if isinstance(s, ResultStep)).content == "42"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("plain text", "plain text"),
        ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "a\n\nb"),
        ({"role": "assistant", "content": "one message"}, "one message"),
        ([], ""),
    ],
)
def test_a_completion_without_tools_reads_as_before(completion, expected):
    assert read_completion(completion) == read_completion(completion).__class__(expected)


def test_offered_tools_make_a_trajectory_even_when_none_was_called():
    schema = {"type": "function", "function": {"name": "search", "description": "Search the web."}}
    read = read_completion("I know it: 42.", [schema])
    assert read.completion == "I know it: 42."
    assert read.trajectory is not None and read.trajectory.steps == () and read.trajectory.calls == 0
    assert read.trajectory.tools == (ToolSpec(name="search", description="Search the web."),)


def test_a_trajectory_that_ends_in_a_tool_call_or_result_has_no_final_reply():
    for messages in (OPENAI[:1], OPENAI[:2]):
        read = read_completion(messages)
        assert read.completion == "" and read.trajectory is not None and read.trajectory.steps


def test_user_turns_in_a_tool_using_completion_are_the_environments_replies():
    messages = [assistant("Is it 41?"), {"role": "user", "content": "No, higher."}, *TRL]
    read = read_completion(messages)
    assert read.trajectory is not None and read.completion == "It is 42."
    assert read.trajectory.steps[:2] == (
        TextStep(text="Is it 41?"),
        ResultStep(content="No, higher.", role="user"),
    )
    # without tools, a conversation is its assistant text, as before
    assert read_completion([*messages[:2], assistant("42.")]).completion == "Is it 41?\n\n42."


def test_the_legacy_function_call_and_multimodal_tool_content():
    legacy = {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": "{}"}}
    content = [{"type": "image"}, {"type": "text", "text": "a chart: 42"}]
    read = read_completion(
        [legacy, {"role": "function", "name": "calc", "content": content}, assistant("42")]
    )
    assert read.trajectory is not None
    assert [s.kind for s in read.trajectory.steps] == ["call", "result"]
    assert read.trajectory.steps[1] == ResultStep(content="a chart: 42", name="calc")


@pytest.mark.parametrize(
    ("completion", "tools", "message"),
    [
        ([assistant(None, "not a call")], None, "message 0, tool call 0 is a str, expected a mapping"),
        ([{"role": "assistant", "tool_calls": {"id": "x"}}], None, "tool_calls is a dict, expected a list"),
        ([assistant(None, {"type": "function"})], None, "has no function {name, arguments}"),
        ([assistant(None, call("", "{}"))], None, "the function's name must be non-empty text"),
        (
            [assistant(None, call("calc", 42))],
            None,
            "arguments of 'calc' are a int, expected JSON text or a mapping",
        ),
        ([assistant(None, call("calc", ["x"]))], None, "are a list"),
        ([assistant(None, {"type": "function", "function": {"name": "calc"}})], None, "has no arguments"),
        (
            [assistant(None, {"type": "code", "function": {"name": "c", "arguments": ""}})],
            None,
            "type 'code'",
        ),
        ([{"role": "robot", "content": "x"}, tool("1")], None, "message 0 has role 'robot'"),
        # issue 41: without tool use an unknown role was dropped, not refused
        ([assistant("42"), {"role": "narrator", "content": "x"}], None, "message 1 has role 'narrator'"),
        ([{"role": "Assistant", "content": "42"}], None, "message 0 has role 'Assistant'"),
        ("text", "search", "tools is a str, expected a list of tool schemas"),
        ("text", [{"description": "no name"}], "tools[0] is not a tool schema"),
        ([tool("x")] * (MAX_STEPS + 1), None, f"a trajectory has at most {MAX_STEPS}"),
        ([tool("x" * 1_000_000)] * 21, None, "a trajectory has at most 20,000,000"),
    ],
)
def test_what_cannot_be_read_says_where(completion, tools, message):
    with pytest.raises(TrajectoryError, match=re.escape(message)):
        read_completion(completion, tools)


def test_a_malformed_trajectory_is_invalid_input_naming_the_message():
    built = build_request("q", [assistant(None, call("calc", 42))], "42", None, {"request_id": "r1"})
    assert isinstance(built, InvalidInput) and built.request_id == "r1"
    assert built.problem.startswith("completion: message 0, tool call 0: arguments of 'calc'")


def test_a_request_carries_the_trajectory_the_prompt_transcript_and_the_tools():
    prompt = [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "6*7?"}]
    built = build_request(prompt, OPENAI, "42", None, {"tools": [lambda x: x]})
    assert not isinstance(built, InvalidInput)
    assert built.prompt == "system: Use tools.\n\nuser: 6*7?" and built.completion == "It is 42."
    assert built.trajectory is not None and built.trajectory.tools[0].name == "<lambda>"


def test_tool_specs_read_schemas_functions_and_callables():
    def search(query: str) -> str:
        """Search the web.

        Longer text."""
        return query

    found = tool_specs(
        [{"type": "function", "function": {"name": "a", "description": "A."}}, {"name": "b"}, search]
    )
    assert found == (
        ToolSpec(name="a", description="A."),
        ToolSpec(name="b"),
        ToolSpec(name="search", description="Search the web."),
    )
    assert tool_specs(None) == tool_specs([]) == ()


POLICY, ENVIRONMENT = True, False


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ([(POLICY, "no tools here")], None),
        (
            [(POLICY, 'Checking.\n<tool_call>\n{"name": "calc", "arguments": {"x": 1}}\n</tool_call>'),
             (ENVIRONMENT, "\nuser\n<tool_response>\n42\n</tool_response>\nassistant\n"), (POLICY, "It is 42.")],
            [assistant("Checking.", call("calc", {"x": 1})), {"role": "tool", "content": "42"}, assistant("It is 42.")],
        ),
        (  # special tokens kept, two results in one turn, a call that is not JSON left as text
            [(POLICY, '<tool_call>{"name": "a", "arguments": "{}"}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call><|im_end|>'),
             (ENVIRONMENT, "\n<|im_start|>user\n<tool_response>1</tool_response>\n<tool_response>2</tool_response><|im_end|>\n<|im_start|>assistant\n"),
             (POLICY, "<tool_call>oops</tool_call><|im_end|>")],
            [assistant("", call("a", "{}"), call("b", {})), {"role": "tool", "content": "1"},
             {"role": "tool", "content": "2"}, assistant("<tool_call>oops</tool_call>")],
        ),
        (  # a tool result the policy wrote itself is its text; the environment's reply, a user turn
            [(POLICY, '<tool_call>{"name": "a", "arguments": {}}</tool_call>'), (ENVIRONMENT, "Error: timeout"),
             (POLICY, "<tool_response>\n709,037\n</tool_response>\nIt is 709,037.")],
            [assistant("", call("a", {})), {"role": "user", "content": "Error: timeout"},
             assistant("<tool_response>\n709,037\n</tool_response>\nIt is 709,037.")],
        ),
        ([(POLICY, "<tool_response>\n709,037\n</tool_response>\nIt is 709,037.")], None),
    ],
)  # fmt: skip
def test_a_hermes_response_is_read_back_into_messages_by_who_wrote_each_span(spans, expected):
    assert hermes_messages([WrittenSpan(*span) for span in spans]) == expected
