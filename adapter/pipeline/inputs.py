"""Request building and input coercion: what a trainer passes, as a ``JudgeRequest``.

Text fields accept strings, numbers and None (-> ""); lone surrogates become U+FFFD.
Anything that cannot be judged (a list as the completion, a batch item that is neither a
dict nor a tuple) is an ``InvalidInput``: the facade answers it with a defined reward
(0, source ``rule``, reason ``invalid_input``), never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from judge_vllm.errors import JudgeInputError
from judge_vllm.schemas import JudgeRequest

__all__ = [
    "REQUEST_FIELDS",
    "InvalidInput",
    "RewardItem",
    "batch_items",
    "build_request",
    "group_requests",
    "request_from_item",
]

RewardItem = Mapping[str, object] | JudgeRequest | Sequence[object]
REQUEST_FIELDS = ("prompt", "completion", "answer", "answer_type")


@dataclass(frozen=True)
class InvalidInput:
    """Input that cannot be judged, and what is wrong with it."""

    request_id: str
    problem: str


def build_request(
    prompt: object, completion: object, answer: object, answer_type: object, metadata: dict[str, object]
) -> JudgeRequest | InvalidInput:
    """A request from a reward call's arguments (``request_id`` may come in ``metadata``)."""
    fields = {"prompt": prompt, "completion": completion, "answer": answer, "answer_type": answer_type}
    request_id = metadata.pop("request_id", None)
    if request_id is not None:
        fields["request_id"] = request_id
    try:
        return JudgeRequest.model_validate({**fields, "metadata": metadata})
    except ValidationError as err:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        return InvalidInput(_printable_id(request_id), problem)


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
    collection of items (None, a number, a string, a single dict). Each item is checked later,
    one by one: a bad item gets its own defined reward."""
    if items is None or isinstance(items, str | bytes | Mapping) or not hasattr(items, "__iter__"):
        raise JudgeInputError(
            "reward_batch takes a list of items (dicts with prompt, completion, answer), "
            f"got {type(items).__name__}"
        )
    return list(items)


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
