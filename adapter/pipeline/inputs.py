"""Request building and input coercion: what a trainer passes, as a ``JudgeRequest``.

Text fields accept strings, numbers and None (-> ""); lone surrogates become U+FFFD. A
prompt or completion may also be chat messages: a prompt is shown as its transcript
(``conversations``), a completion that uses tools (or an item with ``tools``) is read as an
agent trajectory (``trajectory``), any other as its assistant text.
Anything that cannot be judged (a list as the completion that is not chat messages, a
malformed tool call, a batch item that is neither a dict nor a tuple, an answer_type that is
not in the answer-type registry, ``adapter.rules.answer_types``) is an ``InvalidInput`` that
says what to fix (an unknown answer_type: the closest known one). The facade refuses it with
``JudgeInputError`` before anything is judged (``invalid_rows: error``, the default: a typo in
a dataset stops the run at its first batch), or answers it with a defined reward (0, source
``rule``, reason ``invalid_input``; ``invalid_rows: zero``, for messy data). A key no reward
reads (``anwser``) is a mistake in the caller's code, the same in every row: ``JudgeInputError``
at the call, whatever ``invalid_rows`` says (the integrations never build one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from adapter.pipeline.conversations import prompt_text
from adapter.pipeline.trajectory import TrajectoryError, is_messages, read_completion
from adapter.rules.answer_types import known_answer_type
from judge_vllm.errors import JudgeInputError, did_you_mean
from judge_vllm.schemas import JudgeRequest

__all__ = [
    "ITEM_KEYS",
    "REQUEST_FIELDS",
    "InvalidInput",
    "RewardItem",
    "batch_items",
    "build_request",
    "check_keys",
    "group_requests",
    "request_from_item",
]

RewardItem = Mapping[str, object] | JudgeRequest | Sequence[object]
REQUEST_FIELDS = ("prompt", "completion", "answer", "answer_type")
ITEM_KEYS = (*REQUEST_FIELDS, "request_id", "rubric", "tools", "responses", "trajectory")
"""Every key a reward reads, from a ``reward_batch`` item or as a keyword of ``reward``
(``tools``: the tool schemas an agent was offered; ``responses``: a comparison's responses, as
ensembles hand a request on to their members; ``trajectory``: a ``Trajectory`` already read, as
a rubric item hands its own on to its criteria)."""


@dataclass(frozen=True)
class InvalidInput:
    """Input that cannot be judged, and what is wrong with it."""

    request_id: str
    problem: str


def build_request(
    prompt: object, completion: object, answer: object, answer_type: object, metadata: dict[str, object]
) -> JudgeRequest | InvalidInput:
    """A request from a reward call's arguments (``request_id``, ``tools`` and ``trajectory`` may
    come in ``metadata``)."""
    request_id = metadata.pop("request_id", None)
    try:
        read = read_completion(completion, metadata.pop("tools", None))
    except TrajectoryError as err:
        return InvalidInput(_printable_id(request_id), f"completion: {err}")
    fields = {
        "prompt": prompt_text(prompt) if is_messages(prompt) else prompt,
        "completion": read.completion,
        "answer": answer,
        "answer_type": answer_type,
        "trajectory": metadata.pop("trajectory", None) or read.trajectory,
    }
    if request_id is not None:
        fields["request_id"] = request_id
    try:
        fields["answer_type"] = known_answer_type(answer_type)
        return JudgeRequest.model_validate({**fields, "metadata": metadata})
    except ValidationError as err:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        return InvalidInput(_printable_id(request_id), problem)
    except ValueError as err:
        return InvalidInput(_printable_id(request_id), f"answer_type: {err}")


def check_keys(keys: Iterable[object], where: str) -> None:
    """``JudgeInputError`` for the first key no reward reads, with the closest known one: a typo
    such as ``anwser`` would otherwise judge without a reference."""
    for key in keys:
        if key not in ITEM_KEYS:
            hint = did_you_mean(key, ITEM_KEYS) if isinstance(key, str) else ""
            raise JudgeInputError(
                f"{where}: unknown key {key!r}{hint}; the keys are {', '.join(ITEM_KEYS)}"
            )


def request_from_item(item: object) -> JudgeRequest | InvalidInput:
    """A request from one ``reward_batch`` item: a dict, a ``JudgeRequest`` or a 3-4 tuple."""
    if isinstance(item, JudgeRequest):
        return item
    if isinstance(item, Mapping):
        data = dict(item)
        prompt, completion, answer, answer_type = (data.pop(name, None) for name in REQUEST_FIELDS)
        return build_request(prompt, completion, answer, answer_type, data)
    if isinstance(item, Sequence) and not isinstance(item, str | bytes) and 3 <= len(item) <= 4:
        prompt, completion, answer, answer_type = (*item, None)[:4]
        return build_request(prompt, completion, answer, answer_type, {})
    return InvalidInput("", f"batch item of type {type(item).__name__}: expected a dict or a tuple")


def _printable_id(request_id: object) -> str:
    return request_id if isinstance(request_id, str) else ""


def batch_items(items: object) -> list[object]:
    """The items of a ``reward_batch`` call as a list; ``JudgeInputError`` when ``items`` is not a
    collection of items (None, a number, a string, a single dict) or a dict item has a key no
    reward reads. Each item's values are checked later, one by one: a bad value gets its own
    defined reward."""
    if items is None or isinstance(items, str | bytes | Mapping) or not hasattr(items, "__iter__"):
        raise JudgeInputError(
            "reward_batch takes a list of items (dicts with prompt, completion, answer), "
            f"got {type(items).__name__}"
        )
    listed = list(items)
    for k, item in enumerate(listed):
        if isinstance(item, Mapping):
            check_keys(item, f"item {k}")
    return listed


def group_requests(items: object) -> list[JudgeRequest | InvalidInput]:
    """The members of a ``reward_group`` call: completions of one question against one reference;
    ``JudgeInputError`` naming the first member that differs (a bad member gets its own reward)."""
    built = [request_from_item(item) for item in batch_items(items)]
    valid = [(k, r) for k, r in enumerate(built) if isinstance(r, JudgeRequest)]
    for k, request in valid[1:]:
        first = valid[0][1]
        for field in ("prompt", "answer"):
            if getattr(request, field) != getattr(first, field):
                raise JudgeInputError(
                    f"reward_group: item {k} has another {field} than item {valid[0][0]}; a group is "
                    "the completions of one prompt (call reward_group once per prompt)"
                )
    return built
