"""TRL ``GRPOTrainer`` reward functions backed by the judge.

    from adapter.integrations.trl import judge_reward_func
    trainer = GRPOTrainer(..., reward_funcs=judge_reward_func("configs/trl.yaml"))

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where ``columns`` holds the dataset's other columns (one value per completion) plus
``trainer_state``, ``log_extra`` and ``log_metric``. The whole batch is scored in one
``reward_batch``; with a ``group:`` block in the config (mode pairwise or listwise) the
completions are grouped by prompt (its text or whole conversation, and its reference answer;
never by position) and each group is judged together by ``reward_group``, all groups at once,
the rewards returned in TRL's order. A group is what one process sees: whole groups when each
process's generation batch is a multiple of ``num_generations``. With
``fallback_to_rule: false`` a judge failure is ``None``: TRL turns it into NaN and leaves it
out of the group's baseline instead of reading it as a score.

With tools (``GRPOTrainer(tools=[...])``) TRL passes each completion as chat messages: the
assistant's ``tool_calls`` (arguments as a mapping, no ids), ``role: tool`` results and the final
reply. They reach the judge whole, as an agent's trajectory (docs/trajectories.md); the tools
offered come from ``judge_reward_func(config, tools=[...])`` (the trainer's functions: their
names and docstrings) or a ``tools`` column of the dataset (OpenAI tool schemas, per row).

A reward function holds its config, not a judge: the judge reward is built in the process
that first calls it, and pickling keeps only the config, the column names and the name, so
TRL's ``AsyncGRPOTrainer`` can send it to its rollout worker (a spawned process), where it
builds its own. TRL awaits ``async_judge_reward_func`` from 1.14 on (``is_async_callable``);
earlier releases call a callable object without awaiting it.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import ClassVar, Literal

from typing_extensions import TypedDict

from adapter.config import ConfigLike, RewardConfig
from adapter.factory import create_judge_reward
from adapter.fork_safety import reset_after_fork
from adapter.pipeline.conversations import message_text, prompt_text
from adapter.pipeline.trajectory import TrajectoryError, is_messages, tool_specs
from adapter.result import RewardDict
from adapter.reward import BaseJudgeReward
from judge_vllm.errors import JudgeConfigError, JudgeError, JudgeInputError

__all__ = [
    "ASYNC_MIN_TRL",
    "DEFAULT_NAME",
    "EXTRA_COLUMNS",
    "STEP_SCORES_COLUMN",
    "AsyncJudgeRewardFunc",
    "JudgeRewardFunc",
    "async_judge_reward_func",
    "batch_metrics",
    "judge_reward_func",
    "message_text",
    "prompt_groups",
    "prompt_text",
]

DEFAULT_NAME = "judge_reward"
# The first TRL release that awaits a callable object whose __call__ is async.
ASYNC_MIN_TRL = "1.14"
# Keyword arguments TRL adds to the dataset columns; never mistaken for a column.
_TRL_KWARGS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})
# Columns added to TRL's completions table (``log_extra``), one value per completion: the
# RewardResult field each one shows ("" / None where a reward has no explanation / reason).
EXTRA_COLUMNS: dict[str, Literal["source", "explanation", "reason"]] = {
    "judge_source": "source",
    "judge_explanation": "explanation",
    "judge_reason": "reason",
}
# With ``process:``, one more column: each completion's per-turn scores (``step_scores``: a list, one
# per agent turn, or None). TRL takes one reward per completion (``GRPOTrainer._calculate_rewards``),
# so a turn's score can reach it only as a logged value, never as a reward of its own.
STEP_SCORES_COLUMN = "judge_step_scores"
# The sync function judges its groups on this many threads at most (each waits on the judge's loop).
MAX_GROUP_THREADS = 32

Rewards = list[float | None]
Results = list[RewardDict]


class _PickledState(TypedDict):
    """What a copy of a TRL reward function in another process is rebuilt from."""

    config: RewardConfig
    answer_column: str
    answer_type_column: str
    name: str
    tools: list[dict[str, object]] | None


def prompt_groups(items: Sequence[Mapping[str, object]]) -> list[list[int]]:
    """The positions of each prompt's completions, prompts in order of first appearance.

    A prompt is its text (a conversation's whole transcript), reference answer and rubric:
    interleaved or repeated prompts group the same as TRL's blocks of ``num_generations``."""
    groups: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        key = repr((item["prompt"], item.get("answer"), item.get("rubric")))
        groups.setdefault(key, []).append(k)
    return list(groups.values())


def _in_order(groups: list[list[int]], parts: Sequence[Results], n: int) -> Results:
    """The groups' results back in the batch's order."""
    results: list[RewardDict | None] = [None] * n
    for group, part in zip(groups, parts, strict=True):
        for k, result in zip(group, part, strict=True):
            results[k] = result
    return [r for r in results if r is not None]


def batch_metrics(results: Sequence[RewardDict]) -> dict[str, float]:
    """Per-call judge metrics for TRL's ``log_metric``: where the rewards came from, and how fast."""
    if not results:
        return {}
    n = len(results)
    sources = Counter(r["source"] for r in results)
    return {
        "judge/cache_hit_rate": sources["cache"] / n,
        "judge/fallback_rate": (sources["rule_fallback"] + sources["error"]) / n,
        "judge/none_rate": sources["error"] / n,
        "judge/latency_ms_mean": sum(r["latency_ms"] for r in results) / n,
    }


class _TrlJudgeReward:
    """What the sync and async TRL reward functions share: the lazy judge reward, building
    items and reporting results.

    ``config`` is what ``JudgeRewardSystem`` takes (dict, ``RewardConfig`` or YAML path),
    validated here; a config listing several ``judge_urls`` builds an ensemble.
    ``answer_column`` and ``answer_type_column`` name the dataset columns with the reference
    answer and its type; ``tools``, the tools the trainer offers (functions or OpenAI tool
    schemas), are shown to the judge with each trajectory unless a row's ``tools`` column says.
    """

    _needs_async_trl: ClassVar[bool] = False

    def __init__(
        self,
        config: ConfigLike,
        *,
        answer_column: str = "answer",
        answer_type_column: str = "answer_type",
        name: str = DEFAULT_NAME,
        tools: Sequence[object] | None = None,
    ) -> None:
        if self._needs_async_trl:
            _require_async_trl()
        self.config = RewardConfig.from_any(config)
        self.answer_column = answer_column
        self.answer_type_column = answer_type_column
        # As schemas: what the judge is shown of a tool, and what pickles without the function.
        try:
            specs = None if tools is None else tool_specs(tools)
        except TrajectoryError as err:
            raise JudgeConfigError(f"tools: {err}") from None
        self.tools: list[dict[str, object]] | None = (
            None if specs is None else [{"type": "function", "function": s.model_dump()} for s in specs]
        )
        # TRL names a reward function by ``__name__``: it keys the logged ``rewards/<name>/mean``.
        self.__name__ = name
        self._system: BaseJudgeReward | None = None
        self._closed = False
        self._lock = threading.Lock()
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        # A lock held by another thread at the fork stays held in the child.
        self._lock = threading.Lock()

    @property
    def reward_system(self) -> BaseJudgeReward:
        """This process's judge reward, built on first use."""
        with self._lock:
            if self._closed:
                raise JudgeError("Cannot use a TRL reward function once it has been closed.")
            if self._system is None:
                self._system = create_judge_reward(self.config)
                atexit.register(self.close)  # a trainer that never closes us still exits cleanly
            return self._system

    def close(self) -> None:
        """Close this process's judge reward (its loop thread, connections and cache), if built. Idempotent."""
        with self._lock:
            self._closed = True
            system, self._system = self._system, None
        if system is not None:
            system.close()

    def __getstate__(self) -> _PickledState:
        """What a copy in another process rebuilds from: never the judge reward's threads or connections."""
        return {
            "config": self.config,
            "answer_column": self.answer_column,
            "answer_type_column": self.answer_type_column,
            "name": self.__name__,
            "tools": self.tools,
        }

    def __setstate__(self, state: _PickledState) -> None:
        _TrlJudgeReward.__init__(
            self,
            state["config"],
            answer_column=state["answer_column"],
            answer_type_column=state["answer_type_column"],
            name=state["name"],
            tools=state["tools"],
        )

    def _items(
        self, prompts: object, completions: object, columns: Mapping[str, object]
    ) -> list[dict[str, object]]:
        completions = _column("completions", completions, None)
        n = len(completions)
        rubrics = _column("rubric", columns["rubric"], n) if columns.get("rubric") is not None else [None] * n
        if self.answer_column not in columns and any(r is None for r in rubrics):
            found = sorted(k for k in columns if k not in _TRL_KWARGS)
            raise JudgeConfigError(
                f"TRL passed no {self.answer_column!r} column (dataset columns: {found}); "
                "set answer_column to the column that holds the reference answer"
            )
        prompts = _column("prompts", prompts, n)
        answers = (
            _column(self.answer_column, columns[self.answer_column], n)
            if self.answer_column in columns
            else [None] * n
        )
        answer_types = _column(self.answer_type_column, columns.get(self.answer_type_column) or [None] * n, n)
        offered = _column("tools", columns["tools"], n) if columns.get("tools") is not None else [self.tools] * n
        return [
            {
                "prompt": prompt_text(prompt),
                # text, or chat messages: a tool-using completion is read as a trajectory
                "completion": completion if is_messages(completion) else message_text(completion, "assistant"),
                "answer": answer,
                "answer_type": answer_type,
                **({"rubric": rubric} if rubric is not None else {}),
                **({"tools": _schemas(tools)} if tools is not None else {}),
            }
            for prompt, completion, answer, answer_type, rubric, tools in zip(
                prompts, completions, answers, answer_types, rubrics, offered, strict=True
            )
        ]

    @property
    def grouped(self) -> bool:
        """Whether the config's ``group:`` block has the completions of a prompt judged together."""
        return self.config.group is not None and self.config.group.mode != "pointwise"

    def _report(self, results: Results, columns: Mapping[str, object]) -> Rewards:
        """The rewards, after TRL's ``log_metric`` and ``log_extra`` were told about them (the
        per-turn scores too, in ``STEP_SCORES_COLUMN``, when the config has ``process:``)."""
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            for key, value in batch_metrics(results).items():
                log_metric(key, value)
        log_extra = columns.get("log_extra")
        if callable(log_extra):
            for column, field in EXTRA_COLUMNS.items():
                log_extra(column, [r[field] for r in results])
            if self.config.process is not None:
                log_extra(STEP_SCORES_COLUMN, [r["step_scores"] for r in results])
        return [r["reward"] for r in results]


def _schemas(tools: object) -> object:
    """A row's ``tools``: schemas as they are, or the JSON text of them (as datasets often store it)."""
    if isinstance(tools, str):
        try:
            return json.loads(tools)
        except json.JSONDecodeError:
            return tools  # the reward says why it cannot read them
    return tools


def _column(name: str, values: object, length: int | None) -> list[object]:
    """A batch column as a list (one value per completion: a list, a tuple, an array), or
    ``JudgeInputError`` naming it."""
    if isinstance(values, str | bytes | Mapping) or not (
        hasattr(values, "__len__") and hasattr(values, "__iter__")
    ):
        raise JudgeInputError(
            f"{name}: expected a list, one value per completion; got {type(values).__name__}"
        )
    if length is not None and len(values) != length:
        raise JudgeInputError(f"{name}: {len(values)} values for {length} completions")
    return list(values)


class JudgeRewardFunc(_TrlJudgeReward):
    """A synchronous TRL reward function: ``(prompts, completions, **columns) -> list[float | None]``."""

    def __call__(
        self, prompts: Sequence[object], completions: Sequence[object], **columns: object
    ) -> Rewards:
        """Score one generation batch with the judge; ``None`` where it failed and fallback is off."""
        items = self._items(prompts, completions, columns)
        system = self.reward_system
        if not self.grouped:
            return self._report(system.reward_batch(items), columns)
        groups = prompt_groups(items)
        members = [[items[k] for k in group] for group in groups]
        # One thread per group, so the groups' comparisons meet in the judge's batches.
        with ThreadPoolExecutor(max(1, min(len(groups), MAX_GROUP_THREADS)), "judge-group") as pool:
            parts = list(pool.map(system.reward_group, members))
        return self._report(_in_order(groups, parts, len(items)), columns)


class AsyncJudgeRewardFunc(_TrlJudgeReward):
    """An async TRL reward function, run on TRL's event loop alongside other async rewards.

    Needs TRL >= 1.14 where TRL is installed: raises ``JudgeConfigError`` on an older one.
    """

    _needs_async_trl = True

    async def __call__(
        self, prompts: Sequence[object], completions: Sequence[object], **columns: object
    ) -> Rewards:
        """Score one generation batch with the judge; ``None`` where it failed and fallback is off."""
        items = self._items(prompts, completions, columns)
        system = self.reward_system
        if not self.grouped:
            return self._report(await system.areward_batch(items), columns)
        groups = prompt_groups(items)
        parts = await asyncio.gather(*(system.areward_group([items[k] for k in group]) for group in groups))
        return self._report(_in_order(groups, parts, len(items)), columns)


def _require_async_trl() -> None:
    """Refuse a TRL that would call the async function without awaiting it."""
    try:
        installed = metadata.version("trl")
    except metadata.PackageNotFoundError:
        return  # not used by TRL here
    from packaging.version import Version  # a dependency of TRL itself

    if Version(installed) < Version(ASYNC_MIN_TRL):
        raise JudgeConfigError(
            f"TRL {installed} calls an async reward object without awaiting it "
            f"('coroutine' object is not iterable); upgrade to trl>={ASYNC_MIN_TRL} "
            "or use judge_reward_func (sync, any TRL 1.x)"
        )


# The entry points: ``judge_reward_func(config)`` builds the sync function.
judge_reward_func = JudgeRewardFunc
async_judge_reward_func = AsyncJudgeRewardFunc
