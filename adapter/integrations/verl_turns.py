"""Which tokens of a verl response the policy wrote, carried to the judge (docs/trajectories.md, verl).

verl's agent loops mark each response token 1 when the policy sampled it and 0 when the
environment put it in (a tool's result, an interaction's reply): the response mask. What the
judge is shown as a tool's result must come from there, never from the decoded text, in which a
policy can write ``<tool_response>`` itself. verl 0.9.1 hands a reward function that text alone
(its ``naive`` reward manager), and its streaming reward path (the default when no reward model
is colocated: the agent loop sends each finished rollout to a reward worker) sends the worker the
tokens without the mask. So:

- ``JudgeRewardManager``: verl's ``naive`` reward manager, which also decodes the policy's and the
  environment's stretches of each response apart, by the mask, and hands them to
  ``compute_score`` in ``extra_info[SPANS_KEY]``. The mask is the batch's ``response_mask``
  (rewards computed after the rollout, beside a colocated reward model) or the one the agent
  loop recorded in its extra fields (the streaming path).
- ``MaskRecordingToolAgentLoop``: verl's tool agent loop, recording its mask in its output's extra
  fields (``record_response_mask``; call it from your own agent loop's ``run`` likewise).

On ``python -m verl.trainer.main_ppo``, beside ``reward.custom_reward_function`` (module
``adapter.integrations.verl``)::

    reward.reward_manager.source=importlib
    reward.reward_manager.module.path=pkg://adapter.integrations.verl_turns
    reward.reward_manager.name=JudgeRewardManager
    actor_rollout_ref.rollout.agent.agent_loop_config_path=/abs/path/agent_loops.yaml

where ``agent_loops.yaml`` puts this loop in the place of verl's ``tool_agent``::

    - name: tool_agent
      _target_: adapter.integrations.verl_turns.MaskRecordingToolAgentLoop

Without a mask (another reward manager or agent loop) the judge is shown the decoded response as
one text, with a warning once (``adapter.integrations.verl``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
from verl.protocol import DataProtoItem

from adapter.integrations.verl import SPANS_KEY
from adapter.pipeline.trajectory import WrittenSpan

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "MASK_RUNS_FIELD",
    "JudgeRewardManager",
    "MaskRecordingToolAgentLoop",
    "mask_runs",
    "record_response_mask",
]

logger = logging.getLogger(__name__)

# The agent loop's extra field holding its response mask as runs: [[1, 57], [0, 31], [1, 12]] is
# 57 policy tokens, 31 of the environment's, 12 of the policy's (verl carries extra fields to the
# reward worker on the streaming path, where the batch has no response_mask).
MASK_RUNS_FIELD = "judge_vllm_response_mask_runs"
_said: set[str] = set()  # the warnings given (each once per process)


def mask_runs(mask: Sequence[int]) -> list[list[int]]:
    """A response mask as runs of ``[bit, length]`` (1: the policy's tokens, 0: the environment's)."""
    runs: list[list[int]] = []
    for bit in mask:
        flag = 1 if bit else 0
        if runs and runs[-1][0] == flag:
            runs[-1][1] += 1
        else:
            runs.append([flag, 1])
    return runs


def record_response_mask(output: AgentLoopOutput) -> None:
    """Record ``output``'s response mask (as runs) in its extra fields, for ``JudgeRewardManager``."""
    output.extra_fields[MASK_RUNS_FIELD] = mask_runs(output.response_mask)


class MaskRecordingToolAgentLoop(ToolAgentLoop):
    """verl's tool agent loop, recording which response tokens the policy wrote (``record_response_mask``)."""

    async def run(
        self, sampling_params: dict[str, object], priority: int = 0, **kwargs: object
    ) -> AgentLoopOutput:
        """verl's run, then the record."""
        output: AgentLoopOutput = await super().run(sampling_params, priority, **kwargs)
        record_response_mask(output)
        return output


class JudgeRewardManager(NaiveRewardManager):
    """verl's ``naive`` reward manager, handing ``compute_score`` who wrote each stretch of the
    response (``extra_info[SPANS_KEY]``: ``(by_policy, text)`` pairs) when verl recorded a mask."""

    async def run_single(self, data: DataProto) -> dict[str, object]:
        """The naive manager's reward for the last item of ``data``, with the written spans."""
        data = data[-1:]
        spans = await self.loop.run_in_executor(None, self.written_spans, data[0])
        if spans is not None:
            info = dict(data[0].non_tensor_batch.get("extra_info") or {})
            info[SPANS_KEY] = [tuple(span) for span in spans]
            column = np.empty(1, dtype=object)
            column[0] = info  # a copy: verl's rollouts of one prompt share their extra_info dict
            data.non_tensor_batch["extra_info"] = column
        result: dict[str, object] = await super().run_single(data)
        return result

    def written_spans(self, item: DataProtoItem) -> list[WrittenSpan] | None:
        """The item's response decoded run by run of its mask (special tokens skipped, as the
        naive manager decodes the whole), or None when verl recorded no mask for it."""
        responses = item.batch["responses"]
        length = int(item.batch["attention_mask"][-responses.shape[-1] :].sum())
        runs = _runs(item, length)
        if runs is None:
            return None
        ids = responses[:length].tolist()
        tokenizer = cast("PreTrainedTokenizerBase", self.tokenizer)  # verl annotates it as AutoTokenizer
        spans = []
        start = 0
        for flag, count in runs:
            text = tokenizer.decode(ids[start : start + count], skip_special_tokens=True)
            spans.append(
                WrittenSpan(by_policy=bool(flag), text=text if isinstance(text, str) else "".join(text))
            )
            start += count
        return spans


def _runs(item: DataProtoItem, length: int) -> list[list[int]] | None:
    """The item's mask as runs over its ``length`` response tokens: the batch's ``response_mask``,
    else the agent loop's record; None when there is neither, or the record does not fit."""
    if "response_mask" in item.batch:
        return mask_runs(item.batch["response_mask"][:length].tolist())
    fields = item.non_tensor_batch.get("tool_extra_fields")
    recorded = fields.get(MASK_RUNS_FIELD) if isinstance(fields, dict) else None
    if recorded is None:
        return None
    runs = [[int(flag), int(count)] for flag, count in recorded]
    covered = sum(count for _, count in runs)
    if covered != length:
        if "misfit" not in _said:
            _said.add("misfit")
            logger.warning(
                "the recorded response mask covers %d tokens but the response has %d: such responses "
                "are judged as one text (said once)",
                covered,
                length,
            )
        return None
    return runs
