"""A tiny GRPOTrainer run (two steps of a random 2-layer Llama on CPU), for the TRL unit tests and
the end-to-end tests: ``run_grpo`` trains with a reward function on ``PROMPTS`` or ``DIALOGUES``;
``run_tool_grpo`` with tools, the policy's turns scripted; ``step_logs`` and
``completions_table`` read what the trainer logged. ``reward_step_trainer`` builds a trainer
that is never trained, to call its reward step (``_calculate_rewards``) on completions given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from judge_vllm.model_prep import prepare_model

REPO = Path(__file__).resolve().parents[2]
PROMPTS = ["What is 2+2?", "Name the capital of France."]
SYSTEM = "You are a terse tutor. Answer with one word or number."
# Multi-turn prompts with a system prompt: the judge must see all of it.
DIALOGUES = [
    [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What is 1+1?"},
        {"role": "assistant", "content": "2"},
        {"role": "user", "content": p},
    ]
    for p in PROMPTS
]


def run_grpo(reward_func: Any, tmp_path: Path, conversational: bool = False) -> tuple[Any, list[list[Any]]]:
    """Two GRPO steps of a tiny random Llama (SmolLM2's tokenizer) on 2 prompts x 2 generations.

    Returns the trainer and the rewards of each judge call (one per step; one per prompt and
    step with a ``group:`` block); the completions table of each step is in ``tmp_path/grpo/completions`` (``completions_table``).
    """
    from datasets import Dataset
    from trl import GRPOTrainer

    tokenizer = _tokenizer()
    model = _tiny_llama(tokenizer, 256)
    # "e" is in almost any 8 random tokens and "qqqqq" in none: the fake judge's rewards differ.
    dataset = Dataset.from_dict(
        {
            "prompt": DIALOGUES if conversational else PROMPTS,
            "answer": ["e", "qqqqq"],
            "answer_type": ["TEXT", "TEXT"],
        }
    )
    args = _grpo_args(tmp_path, per_device_train_batch_size=4, max_completion_length=8, max_steps=2)
    returned = _recorded(reward_func)
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, reward_funcs=reward_func, args=args, train_dataset=dataset
    )
    trainer.train()
    return trainer, returned


def run_tool_grpo(
    reward_func: Any,
    tmp_path: Path,
    rows: dict[str, list[Any]],
    tools: Sequence[Callable[..., Any]],
    script: Callable[[str], str],
) -> tuple[Any, list[list[Any]]]:
    """One GRPO step with ``tools`` on ``rows`` (a conversational dataset's columns), 2 generations
    per prompt, with the policy's turns scripted: ``script(text so far)`` returns the next assistant
    turn (a ``<tool_call>`` or the final reply); TRL parses it, calls the tools, and asks again.

    The tokenizer is SmolLM2's with TRL's Qwen 2.5 chat template (Hermes tool calls), whose
    responses TRL knows how to parse. Returns the trainer and the rewards of each judge call."""
    from datasets import Dataset
    from trl import GRPOTrainer
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template

    tokenizer = _tokenizer()
    tokenizer.chat_template = qwen2_5_chat_template
    add_response_schema(tokenizer)
    model = _tiny_llama(tokenizer, 1024)
    args = _grpo_args(tmp_path, per_device_train_batch_size=2, max_completion_length=256, max_steps=1)
    returned = _recorded(reward_func)
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, reward_funcs=reward_func, args=args,
        train_dataset=Dataset.from_dict(rows), tools=list(tools),
    )  # fmt: skip

    def scripted(prompt_ids: list[list[int]], *_: object, **__: object) -> tuple[list[list[int]], None]:
        turns = [script(tokenizer.decode(ids)) for ids in prompt_ids]
        return [tokenizer(turn, add_special_tokens=False)["input_ids"] for turn in turns], None

    trainer._generate_single_turn = scripted  # the one step that needs a model that calls tools
    trainer.train()
    return trainer, returned


def reward_step_trainer(
    reward_func: Any, tmp_path: Path, prompts: Sequence[str], num_generations: int
) -> Any:
    """A GRPOTrainer on ``prompts`` (a dataset column) with ``num_generations`` per prompt and one
    generation batch of all of them, never trained: its ``_calculate_rewards(inputs, prompts,
    completions, completion_ids)`` is TRL's own reward step. A 1-layer random Llama and a byte-level
    tokenizer trained on the prompts (no model files needed)."""
    from datasets import Dataset
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast
    from trl import GRPOTrainer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(prompts), vocab_size=300, show_progress=False)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="</s>", pad_token="</s>")
    args = _grpo_args(
        tmp_path,
        per_device_train_batch_size=len(prompts) * num_generations,
        num_generations=num_generations,
        max_completion_length=4,
        max_steps=1,
    )
    return GRPOTrainer(
        model=_tiny_llama(tokenizer, 64),
        processing_class=tokenizer,
        reward_funcs=reward_func,
        args=args,
        train_dataset=Dataset.from_dict({"prompt": list(prompts), "answer": [""] * len(prompts)}),
    )


def _tokenizer() -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(prepare_model("smollm2", REPO / "models"))


def _tiny_llama(tokenizer: Any, positions: int) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=positions,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    )


def _grpo_args(tmp_path: Path, **settings: Any) -> Any:
    from trl import GRPOConfig

    defaults: dict[str, Any] = {
        "output_dir": str(tmp_path / "grpo"),
        "use_cpu": True,
        "bf16": False,
        "report_to": "none",
        "num_generations": 2,
        "logging_steps": 1,
        "log_completions": True,
        "save_strategy": "no",
        "seed": 0,
    }
    return GRPOConfig(**{**defaults, **settings})


def _recorded(reward_func: Any) -> list[list[Any]]:
    """The rewards of each call of ``reward_func``'s judge, as the trainer runs (a list it fills)."""
    returned: list[list[Any]] = []
    system = reward_func.reward_system

    def record(results):
        returned.append([r["reward"] for r in results])
        return results

    def recording(method):
        return lambda items: record(method(items))

    def arecording(method):
        async def recorded(items):
            return record(await method(items))

        return recorded

    for name in ("reward_batch", "reward_group"):
        setattr(system, name, recording(getattr(system, name)))
    for name in ("areward_batch", "areward_group"):
        setattr(system, name, arecording(getattr(system, name)))
    return returned


def completions_table(tmp_path: Path, step: int) -> Any:
    """The completions table GRPOTrainer wrote at ``step`` (a pandas DataFrame)."""
    import pandas as pd

    return pd.read_parquet(tmp_path / "grpo" / "completions" / f"completions_{step:05d}.parquet")


def step_logs(trainer: Any) -> list[dict[str, float]]:
    """The per-step entries of the trainer's log history (not the closing summary)."""
    return [entry for entry in trainer.state.log_history if "loss" in entry]
