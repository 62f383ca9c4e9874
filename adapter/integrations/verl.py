"""verl reward functions backed by the judge, one shared adapter per process and reward config.

verl 0.7 to 0.9 (tested: 0.9.1), on ``python -m verl.trainer.main_ppo``::

    reward.custom_reward_function.path=pkg://adapter.integrations.verl
    reward.custom_reward_function.name=compute_score_async      # or compute_score
    +reward.custom_reward_function.reward_kwargs.config=/abs/path/configs/verl.yaml

verl 0.9's ``main_ppo`` reads only ``reward.custom_reward_function``: the top-level
``custom_reward_function.*`` of older versions is ignored there, and training then runs on
verl's own rule scorer. ``compute_score_async`` is awaited by verl's reward loop, so one
worker's items meet in one judge batch; ``compute_score`` runs in that loop's thread pool.

``reward_kwargs`` (verl passes them to every call; see ``REWARD_KWARGS``):

- ``config``: the reward YAML; else the file named by ``JUDGE_REWARD_CONFIG``; else the
  ``JUDGE_MODEL_URL`` family of environment variables.
- ``answer_type``: the answer type of items whose ``extra_info`` names none.
- ``group_size``: with a ``group:`` block in the config (mode pairwise or listwise), the
  responses per prompt (``${actor_rollout_ref.rollout.n}``): a group is judged once it has
  that many; unset, once its window passes.
- ``group_window``: seconds a group collects its members after the first arrived (default
  ``DEFAULT_GROUP_WINDOW_S``); a group not full by then is judged with what arrived.

verl 0.9 scores each response in its own call and passes neither the prompt's ``uid`` nor
the group, so ``compute_score_async`` collects a group in its process (``GroupCollector``):
the calls of one prompt (the same ``data_source``, ``extra_info`` ``index``, ``split`` and
``question``, and ``ground_truth``) wait for each other, then the group is judged once with
``areward_group`` and each call returns its own reward. A call returns within
``group_window`` plus the group deadline plus ``reward_timeout``; a group of one is judged on its own.
verl sends each response to a random reward worker: set ``reward.num_workers=1`` so that a
group meets in one process (one async worker holds a whole step's calls). An item whose
``extra_info`` has neither ``index`` nor ``question``, and every ``compute_score`` call (run
in threads), is judged on its own.

verl's ``ground_truth`` is the reference answer; a list or array of them means any of them
is right (as verl's own QA scorers read one): each is judged, the best reward counts.
``extra_info["answer_type"]`` and ``extra_info["question"]`` (where verl's data
preprocessing puts the question) are the answer type and the judge's prompt;
``extra_info["rubric"]`` (a list of criteria) makes the item a rubric item (README: rubric
rewards), judged against its criteria instead of ``ground_truth``. With
``verl_reward_router: true`` in the config, the reward-model router verl passes
(``reward_router_address``) is the judge instead of ``judge_url``.

A multi-turn rollout (verl's tool agent loop, ``multi_turn.format: hermes``) reaches the reward
as the decoded response with the tools' outputs in it, and only verl's response mask says which
tokens the tools wrote: a policy can write ``<tool_response>`` into its own text. With the
reward manager and agent loop of ``adapter.integrations.verl_turns``, the mask arrives as who
wrote each stretch of the response (``extra_info[SPANS_KEY]``), and the agent's steps are read by
it (a ``<tool_call>`` the policy wrote is a call, a ``<tool_response>`` the environment wrote a
tool result, the policy's text after the last its final reply) and judged as a trajectory
(docs/trajectories.md). Without a mask the decoded response is judged as one text, no steps read
from it, with a warning once. ``extra_info["tools"]``
(OpenAI tool schemas), when the data has it, says which tools were offered. What verl adds to
``extra_info`` for such rollouts (``num_turns`` from ``__num_turns__``, ``turn_scores``,
``tool_rewards``, ``rollout_reward_scores``) is accepted and left to verl: the judge's reward
is the task's. A group is still the calls of one prompt, whatever their turns.

Each score is a dict with the same keys and types for every item, as verl's
``reward_extra_info`` needs: ``score``, ``source``, ``reason`` ("" when there is none),
``confidence`` (None when there is none, which verl's validation metrics leave out),
``judge_latency_ms`` and ``fallback``. verl writes every score into a reward tensor and
cannot mask one, so a judge failure with ``fallback_to_rule: false`` raises ``JudgeError``
instead of becoming a made-up number.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from typing_extensions import TypedDict

from adapter.config import RewardConfig
from adapter.factory import create_judge_reward
from adapter.integrations.group_collector import DEFAULT_GROUP_WINDOW_S, GroupCollector
from adapter.integrations.process_rewards import ProcessRewards
from adapter.pipeline.trajectory import WrittenSpan, hermes_messages
from adapter.result import RewardDict, Source
from adapter.reward import BaseJudgeReward
from judge_vllm.errors import JudgeConfigError, JudgeError

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_GROUP_WINDOW_S",
    "REWARD_KWARGS",
    "SPANS_KEY",
    "VerlScore",
    "close_adapter",
    "compute_score",
    "compute_score_async",
    "get_adapter",
]

logger = logging.getLogger(__name__)

CONFIG_ENV = "JUDGE_REWARD_CONFIG"
# Where JudgeRewardManager (adapter/integrations/verl_turns.py) puts who wrote each stretch of the
# response, read from verl's response mask: a list of (by_policy, text).
SPANS_KEY = "judge_vllm_written_spans"
REWARD_KWARGS = ("config", "answer_type", "group_size", "group_window")
# Each reference is one judgment; a list longer than this is cut (with a warning).
MAX_REFERENCES = 16
# What verl's reward managers pass besides the reward kwargs: read, or knowingly left alone.
_VERL_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer"})

_adapters = ProcessRewards()
_warned: set[str] = set()


class VerlScore(TypedDict):
    """What ``compute_score`` returns to verl: the same keys and types for every item."""

    score: float
    source: Source
    reason: str  # "" when there is none
    confidence: float | None
    judge_latency_ms: float
    fallback: bool


@dataclass(frozen=True)
class _Member:
    """One call's response in a group: its items (one per reference) and the judge they share."""

    adapter: BaseJudgeReward
    items: list[dict[str, object]]


async def _judge_group(members: list[_Member]) -> list[list[RewardDict]]:
    """A group's results, for each member one per reference: each reference judges the group
    once (the members of a group share their references)."""
    adapter = members[0].adapter
    by_reference = await asyncio.gather(
        *(adapter.areward_group([m.items[j] for m in members]) for j in range(len(members[0].items)))
    )
    return [[results[k] for results in by_reference] for k in range(len(members))]


_groups: GroupCollector[_Member, list[RewardDict]] = GroupCollector(_judge_group)


def get_adapter(reward_router_address: str | None = None, config: str | None = None) -> BaseJudgeReward:
    """The process's judge reward for a config file (``config``, else ``JUDGE_REWARD_CONFIG``,
    else the environment), built on first use; on verl's reward-model router when the config
    opts in and verl passed one."""
    if config is not None and not isinstance(config, str):
        raise JudgeConfigError(
            f"reward_kwargs.config must be the path of a reward YAML file, not {type(config).__name__}"
        )
    source = config or os.environ.get(CONFIG_ENV) or None
    return _adapters.get(source, lambda: create_judge_reward(_reward_config(source, reward_router_address)))


def _reward_config(source: str | None, reward_router_address: str | None) -> RewardConfig:
    config = RewardConfig.from_any(source)
    if not (config.verl_reward_router and reward_router_address):
        return config
    url = reward_router_address
    url = url if url.startswith(("http://", "https://")) else f"http://{url}"
    return RewardConfig.model_validate({**dict(config), "judge_url": url, "judge_replicas": None})


def _router_address(kwargs: Mapping[str, object]) -> str | None:
    """The reward-model router verl passed (``reward_router_address``), if any."""
    address = kwargs.get("reward_router_address")
    return address if isinstance(address, str) else None


def close_adapter() -> None:
    """Close the shared judge rewards; the next call builds new ones."""
    _adapters.close()


def _warn_once(key: str, message: str, *args: object) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message, *args)


def _warn_unknown(kwargs: Mapping[str, object]) -> None:
    """A misspelt reward kwarg would otherwise be ignored without a word: name it, once."""
    for name in sorted(set(kwargs) - _VERL_KWARGS):
        _warn_once(
            name,
            "verl passed the keyword argument %r, which judge-vllm ignores; its reward_kwargs are %s",
            name,
            ", ".join(REWARD_KWARGS),
        )


def _references(ground_truth: object) -> list[object]:
    """The reference answers in verl's ``ground_truth``: one, or each of a list or an array, at
    most ``MAX_REFERENCES`` (each is one judgment: 10,000 references would be 10,000 calls).
    An empty list stays one (invalid) answer, so the reward says why it is 0."""
    if hasattr(ground_truth, "tolist"):  # numpy arrays and scalars, as parquet rows carry them
        ground_truth = ground_truth.tolist()
    if isinstance(ground_truth, list | tuple) and ground_truth:
        if len(ground_truth) > MAX_REFERENCES:
            logger.warning(
                "ground_truth lists %d references; judging against the first %d",
                len(ground_truth),
                MAX_REFERENCES,
            )
        return list(ground_truth[:MAX_REFERENCES])
    return [ground_truth]


def _written_spans(info: Mapping[str, object]) -> list[WrittenSpan] | None:
    """Who wrote each stretch of the response, as ``JudgeRewardManager`` read it from verl's
    response mask (``extra_info[SPANS_KEY]``), or None when verl passed no mask."""
    spans = info.get(SPANS_KEY)
    if spans is None:
        return None
    if not isinstance(spans, list | tuple) or not all(
        isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], bool) and isinstance(s[1], str)
        for s in spans
    ):
        raise JudgeConfigError(
            f"extra_info[{SPANS_KEY!r}] must be the (by_policy, text) spans JudgeRewardManager writes; "
            "leave the key to it"
        )
    return [WrittenSpan(*span) for span in spans]


def _completion(solution_str: object, info: Mapping[str, object]) -> object:
    """The response as the judge is shown it: the agent's steps read by who wrote each span when
    verl said so (the response mask), else the decoded text as one response, no steps read from
    it (a policy can write anything, a tool's result included)."""
    spans = _written_spans(info)
    if spans is not None:
        return hermes_messages(spans) or "".join(span.text for span in spans)
    if isinstance(solution_str, str) and ("<tool_response>" in solution_str or "<tool_call>" in solution_str):
        _warn_once(
            "<unmasked>",
            "verl passed a response with tool turns but no response mask, so which tokens the tools "
            "wrote is unknown: the judge is shown the decoded text as one response, without steps. "
            "Use the reward manager and agent loop of adapter.integrations.verl_turns "
            "(docs/trajectories.md, verl)",
        )
    return solution_str


def _items(
    solution_str: str, ground_truth: object, extra_info: Mapping[str, object] | None, answer_type: str | None
) -> list[dict[str, object]]:
    info = extra_info if isinstance(extra_info, Mapping) else {}
    item = {
        "prompt": info.get("question", ""),
        "completion": _completion(solution_str, info),
        "answer_type": info.get("answer_type") or answer_type,
        **({"tools": _listed(info["tools"])} if info.get("tools") is not None else {}),
    }
    if info.get("rubric") is not None:  # a rubric item: judged against its criteria, not a reference
        return [{**item, "rubric": info["rubric"]}]
    return [{**item, "answer": reference} for reference in _references(ground_truth)]


def _listed(value: object) -> object:
    """A parquet row's list (a numpy array of dicts) as a list; anything else as it is."""
    return value.tolist() if hasattr(value, "tolist") else value


def _grouped(adapter: BaseJudgeReward) -> bool:
    group = adapter.config.group
    return group is not None and group.mode != "pointwise"


def _group_key(
    adapter: BaseJudgeReward,
    data_source: str,
    extra_info: Mapping[str, object] | None,
    items: list[dict[str, object]],
) -> Hashable | None:
    """What the calls of one prompt share (its judge, dataset row and items but the response),
    or None when ``extra_info`` cannot tell prompts apart (no ``index``, no ``question``)."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    if info.get("index") is None and not info.get("question"):
        _warn_once(
            "<ungrouped>",
            "extra_info has neither 'index' nor 'question', so the responses of one prompt cannot "
            "be told from another's: judging each on its own (put the question in extra_info)",
        )
        return None
    shared = [{k: v for k, v in item.items() if k != "completion"} for item in items]
    return id(adapter), repr((data_source, info.get("split"), info.get("index"), shared))


def _group_limits(group_size: object, group_window: object) -> tuple[int | None, float]:
    """``reward_kwargs.group_size`` and ``group_window``, checked: a count (or None: each group
    collects for its whole window) and a positive number of seconds."""
    if not (group_size is None or (type(group_size) is int and group_size >= 1)):
        raise JudgeConfigError(
            f"reward_kwargs.group_size must be the responses per prompt (rollout.n, >= 1), not {group_size!r}"
        )
    if not (type(group_window) is int or type(group_window) is float) or not 0 < group_window < 3600:
        raise JudgeConfigError(
            f"reward_kwargs.group_window must be seconds (0 < window < 3600), not {group_window!r}"
        )
    return group_size, float(group_window)


def _to_verl(results: list[RewardDict]) -> VerlScore:
    """verl's score dict from the results for each reference: the best reward counts."""
    rewards: list[float] = []
    for result in results:
        reward = result["reward"]
        if reward is None:
            raise JudgeError(
                f"judge failed ({result['reason']}): {result['error']}; verl cannot mask a missing "
                "reward, so set fallback_to_rule: true to let the rule reward answer"
            )
        rewards.append(reward)
    best_reward, best = max(zip(rewards, results, strict=True), key=lambda pair: pair[0])
    return {
        "score": float(best_reward),
        "source": best["source"],
        "reason": best["reason"] or "",
        "confidence": best["confidence"],
        "judge_latency_ms": float(best["latency_ms"]),
        "fallback": best["source"] == "rule_fallback",
    }


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: object,
    extra_info: Mapping[str, object] | None = None,
    *,
    config: str | None = None,
    answer_type: str | None = None,
    group_size: int | None = None,
    group_window: float = DEFAULT_GROUP_WINDOW_S,
    **kwargs: object,
) -> VerlScore:
    """verl's ``compute_score``: judge one response (see the module docs for the kwargs; the
    group ones are read only by ``compute_score_async``)."""
    _warn_unknown(kwargs)
    adapter = get_adapter(_router_address(kwargs), config)
    if _grouped(adapter):
        _warn_once(
            "<sync>",
            "compute_score judges each response on its own; the config's group: block needs compute_score_async",
        )
    return _to_verl(adapter.reward_batch(_items(solution_str, ground_truth, extra_info, answer_type)))


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: object,
    extra_info: Mapping[str, object] | None = None,
    *,
    config: str | None = None,
    answer_type: str | None = None,
    group_size: int | None = None,
    group_window: float = DEFAULT_GROUP_WINDOW_S,
    **kwargs: object,
) -> VerlScore:
    """``compute_score`` for verl's reward loop to await: its concurrent items share judge
    batches; with a ``group:`` block, the responses of one prompt are judged together."""
    _warn_unknown(kwargs)
    adapter = get_adapter(_router_address(kwargs), config)
    items = _items(solution_str, ground_truth, extra_info, answer_type)
    key = _group_key(adapter, data_source, extra_info, items) if _grouped(adapter) else None
    if key is None:
        return _to_verl(await adapter.areward_batch(items))
    size, window_s = _group_limits(group_size, group_window)
    return _to_verl(await _groups.submit(key, _Member(adapter, items), size, window_s))
