"""verl's reward loop as its trainer drives it, for the verl tests: the trainer config composed from
verl's own yaml with a user's overrides (``trainer_config``, ``our_function``, ``our_manager``), a
batch laid out as verl's agent loop lays it out (``rollout``, a policy tokenizer from
``write_tokenizer``), and one ``RewardLoopWorker`` scoring it in-process (``run_reward_loop``,
``rewards_of``).

A multi-turn row says who wrote each stretch of its response (``Row.written``): the policy's
tokens and the environment's are encoded apart, as verl's tool agent loop encodes a generation
and a tool's turn, and its mask reaches the reward worker as verl lays it out (``rollout(mask=)``):
``"batch"``, the batch's ``response_mask`` (``AgentLoopWorker._postprocess``: rewards computed
after the rollout); ``"recorded"``, the streaming path (``AgentLoopWorker._compute_score``: no
mask in the batch, the agent loop's extra fields in ``tool_extra_fields``) with the record of
``MaskRecordingToolAgentLoop``; ``"none"``, the streaming path of verl's own tool agent loop."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml
from hydra import compose, initialize_config_module
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf
from tensordict import TensorDict
from tokenizers import ByteLevelBPETokenizer
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopWorker

from adapter.integrations.verl_turns import MASK_RUNS_FIELD, mask_runs

PATH_KEY = "reward.custom_reward_function.path"
NAME_KEY = "reward.custom_reward_function.name"
KWARGS_KEY = "+reward.custom_reward_function.reward_kwargs"
OUR_MANAGER = [
    "reward.reward_manager.source=importlib",
    "reward.reward_manager.module.path=pkg://adapter.integrations.verl_turns",
    "reward.reward_manager.name=JudgeRewardManager",
]


@dataclass(frozen=True)
class Row:
    """One dataset row and the policy's response, as verl's parquet and rollout carry them."""

    question: str
    response: str
    ground_truth: Any
    extra: dict[str, Any] = field(default_factory=dict)
    turns: dict[str, Any] | None = None  # a multi-turn rollout's __num_turns__ and tool_extra_fields
    written: Sequence[tuple[bool, str]] | None = None  # (by the policy?, text) spans making up ``response``


def write_tokenizer(
    path: Path, texts: Sequence[str], special: Sequence[str] = (), chat_template: str | None = None
) -> Path:
    """A byte-level tokenizer on disk, as verl loads the policy model's: exact round trips on
    ``texts``; ``special`` tokens (a chat template's turn marks) that decoding skips."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=300, show_progress=False)
    fast = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="</s>", pad_token="</s>")
    fast.add_special_tokens({"additional_special_tokens": list(special)})
    if chat_template is not None:
        fast.chat_template = chat_template
    fast.save_pretrained(path)
    return path


def reward_yaml(tmp_path: Path, **settings: Any) -> Path:
    """A reward config file with a private cache."""
    path = tmp_path / f"reward-{len(list(tmp_path.glob('reward-*')))}.yaml"
    config = {"mode": "fast", "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **settings}
    path.write_text(yaml.safe_dump(config))
    return path


def composed_config(tokenizer_dir: Path, *overrides: str) -> DictConfig:
    """The config ``python -m verl.trainer.main_ppo OVERRIDES`` runs with (Hydra, verl's own yaml)."""
    with initialize_config_module("verl.trainer.config", version_base=None):
        return compose("ppo_trainer", overrides=[f"actor_rollout_ref.model.path={tokenizer_dir}", *overrides])


@functools.cache
def _base_config(tokenizer_dir: Path) -> DictConfig:
    return composed_config(tokenizer_dir)


def trainer_config(tokenizer_dir: Path, *overrides: str) -> DictConfig:
    """``composed_config``, faster: Hydra composes verl's yaml once (about a second) and its
    parser applies the overrides (``+key`` adds a key; a new key without ``+`` is refused)."""
    config = copy.deepcopy(_base_config(tokenizer_dir))
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        OmegaConf.update(config, override.key_or_group, override.value(), force_add=override.is_add())
    return config


def our_function(name: str, config: Path, *extra: str) -> list[str]:
    """Overrides naming one of our functions, with our reward config in its reward_kwargs."""
    return [
        f"{PATH_KEY}=pkg://adapter.integrations.verl",
        f"{NAME_KEY}={name}",
        f"{KWARGS_KEY}.config={config}",
        *extra,
    ]


def _encoded(tokenizer: PreTrainedTokenizerFast, row: Row) -> tuple[list[int], list[int]]:
    """The row's response tokens and its mask: each written span encoded on its own."""
    ids: list[int] = []
    mask: list[int] = []
    for by_policy, text in row.written or [(True, row.response)]:
        encoded = tokenizer.encode(text)
        ids += encoded
        mask += [int(by_policy)] * len(encoded)
    return ids, mask


def rollout(
    tokenizer_dir: Path, rows: Sequence[Row], mask: Literal["none", "batch", "recorded"] = "none"
) -> DataProto:
    """A batch as verl's agent loop hands it to the reward loop: token ids, masks, dataset fields,
    and the response mask where ``mask`` says (the module's docstring)."""
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    pad = torch.nn.utils.rnn.pad_sequence
    encoded = [_encoded(tokenizer, row) for row in rows]
    prompts = [torch.tensor(tokenizer.encode(row.question)) for row in rows]
    responses = [torch.tensor(ids, dtype=torch.int64) for ids, _ in encoded]
    prompt_ids, response_ids = pad(prompts, batch_first=True), pad(responses, batch_first=True)
    prompt_mask = pad([torch.ones_like(p) for p in prompts], batch_first=True)
    response_attention = pad([torch.ones_like(r) for r in responses], batch_first=True)
    attention = torch.cat([prompt_mask, response_attention], dim=1)
    tensors = {"prompts": prompt_ids, "responses": response_ids, "attention_mask": attention}
    if mask == "batch":
        tensors["response_mask"] = pad([torch.tensor(m) for _, m in encoded], batch_first=True)
    batch = TensorDict(tensors, batch_size=len(rows))
    turns = [copy.deepcopy(row.turns or {}) for row in rows]
    if mask == "recorded":
        for turn, (_, written) in zip(turns, encoded, strict=True):
            turn.setdefault("tool_extra_fields", {})[MASK_RUNS_FIELD] = mask_runs(written)
    non_tensor = {
        **{
            key: np.array([turn[key] for turn in turns], dtype=object) for key in turns[0]
        },  # what the tool agent loop adds for multi-turn rollouts
        "data_source": np.array(["judge-vllm/test"] * len(rows), dtype=object),
        "reward_model": np.array([{"ground_truth": row.ground_truth} for row in rows], dtype=object),
        "extra_info": np.array(
            [{"split": "train", "question": row.question, **row.extra} for row in rows], dtype=object
        ),
    }
    return DataProto(batch=batch, non_tensor_batch=non_tensor)


async def run_reward_loop(config: DictConfig, data: DataProto) -> tuple[torch.Tensor, dict[str, np.ndarray]]:
    """What verl's RewardLoopManager does with its workers' outputs: the reward tensor and
    ``reward_extra_info`` as per-key arrays (one worker, in-process instead of a Ray actor)."""
    worker = RewardLoopWorker(config, None)
    outputs = await worker.compute_score_batch(data)
    scores = [output["reward_score"] for output in outputs]
    rm_scores = worker.reward_manager.assemble_rm_scores(data, scores)
    infos = [output["reward_extra_info"] for output in outputs]
    return rm_scores, {key: np.array([info[key] for info in infos]) for key in infos[0]}


def rewards_of(rm_scores: torch.Tensor) -> list[float]:
    """Each row's reward (verl puts it on the last response token)."""
    return [round(float(row.sum()), 3) for row in rm_scores]
