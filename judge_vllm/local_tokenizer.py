"""The judge model's tokenizer, loaded locally: label token ids when the server has no ``/tokenize``
(a router or gateway that forwards only the OpenAI routes). Needs ``transformers``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from judge_vllm.errors import JudgeConfigError

if TYPE_CHECKING:  # transformers is imported only when the tokenizer setting is used
    from transformers import PreTrainedTokenizerBase

__all__ = ["local_token_ids"]


@functools.cache
def _tokenizer(name: str) -> PreTrainedTokenizerBase:
    try:
        from transformers import AutoTokenizer
    except ImportError as err:
        raise JudgeConfigError("the tokenizer setting needs transformers installed") from err
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as err:
        raise JudgeConfigError(f"tokenizer {name!r} could not be loaded: {err}") from None


def local_token_ids(name: str, text: str) -> list[int]:
    """``text``'s token ids under the judge model's tokenizer, loaded locally once."""
    return list(_tokenizer(name).encode(text, add_special_tokens=False))
