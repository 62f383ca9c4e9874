"""An agent's trajectory as the judge reads it: typed steps, fitted to a budget, rendered in tags.

A trajectory is what a tool-using policy did before its final reply: the text it wrote
between tool calls (``TextStep``), each tool call's name and arguments (``CallStep``) and each
tool's result (``ResultStep``), in order, with the tool schemas the task offered. The final
reply itself is the request's ``completion`` (what the rules grade); the trajectory rides
beside it on ``JudgeRequest.trajectory``. Building one from chat messages is the adapter's
business (``adapter.pipeline.trajectory``); this module holds what the judge side needs.

Fitting (``fit_trajectory``) keeps a long trajectory within a character budget: the steps
nearest the end are kept, earlier ones elided under a marker that says how many; each span is
clipped in its middle; the last tool result (with the call that asked for it) is never
elided, and gets up to half the budget. A comparison of several agents' responses fits each
trajectory to its share of one budget (``fit_shared``). Rendering (``render_trace``) puts every
span the policy or a tool wrote in its own nonce tags (``judge_prompts/shared/trace.j2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge_prompts import SHARED_DIR, clip_middle, neutralise, render_template

__all__ = [
    "MAX_STEPS",
    "CallStep",
    "Elided",
    "FittedTrace",
    "ResultStep",
    "ShownStep",
    "Step",
    "TextStep",
    "ToolSpec",
    "Trajectory",
    "fit_shared",
    "fit_trajectory",
    "render_trace",
    "share_budget",
]

# A trajectory longer than this is refused as input (a defined reward, reason invalid_input):
# a judge is shown at most a few dozen steps of it, and the rest only costs memory and time.
MAX_STEPS = 10_000
# What a shown step costs besides its text: its header line and its two tags.
STEP_OVERHEAD_CHARS = 72
# A span is clipped to at most 1/SPAN_SHARE of the budget (never below MIN_SPAN_CHARS), so that
# one huge tool output cannot crowd out every other step.
SPAN_SHARE = 8
MIN_SPAN_CHARS = 200
CLIP_MARGIN_CHARS = 64
# The last tool result may take up to 1/LAST_RESULT_SHARE of the budget: it is the evidence a
# final answer most often rests on.
LAST_RESULT_SHARE = 2
# What the steps are called in the prompt (a profile may name them otherwise: its variable
# ``trace_heading``, e.g. the steps so far, for a judgment of one step).
TRACE_HEADING = "THE AGENT'S STEPS BEFORE ITS FINAL RESPONSE"
# Offered tools listed for the judge: names and the start of each description.
MAX_TOOLS_SHOWN = 32
TOOL_DESCRIPTION_CHARS = 160


class TextStep(BaseModel):
    """Text the policy wrote between tool calls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["text"] = "text"
    text: str


class CallStep(BaseModel):
    """One tool call: the tool's name and its arguments as the policy wrote them (JSON text)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["call"] = "call"
    name: str
    arguments: str = ""
    call_id: str = ""


class ResultStep(BaseModel):
    """What a tool returned (``role: tool``), or what the user or environment answered between
    the policy's turns (``role: user``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["result"] = "result"
    content: str
    name: str = ""
    call_id: str = ""
    role: Literal["tool", "user"] = "tool"


Step = Annotated[TextStep | CallStep | ResultStep, Field(discriminator="kind")]


class ToolSpec(BaseModel):
    """A tool the task offered: its name and what it does (from an OpenAI tool schema)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""


class Trajectory(BaseModel):
    """The steps before an agent's final reply, in order, and the tools it was offered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: tuple[Step, ...] = Field(default=(), max_length=MAX_STEPS)
    tools: tuple[ToolSpec, ...] = ()

    @property
    def calls(self) -> int:
        """How many tool calls the policy made."""
        return sum(isinstance(s, CallStep) for s in self.steps)

    @property
    def chars(self) -> int:
        """The characters of every span (what fitting starts from)."""
        return sum(_span_chars(s) for s in self.steps)

    @property
    def cost_chars(self) -> int:
        """What showing every step whole would cost against a budget (as ``FittedTrace.cost_chars``)."""
        return self.chars + STEP_OVERHEAD_CHARS * len(self.steps)


@dataclass(frozen=True)
class ShownStep:
    """A step the judge is shown: its number in the whole trajectory (from 1), the step with its
    spans clipped, and for a tool result the number of the call it answers (0: unknown)."""

    number: int
    step: TextStep | CallStep | ResultStep
    answers: int = 0


@dataclass(frozen=True)
class Elided:
    """A run of consecutive steps left out."""

    count: int


@dataclass(frozen=True)
class FittedTrace:
    """What the judge is shown of a trajectory, in order, and how much that is."""

    items: tuple[ShownStep | Elided, ...]
    tools: tuple[ToolSpec, ...]
    total_steps: int
    calls: int
    chars_before: int
    chars_after: int

    @property
    def shown(self) -> tuple[ShownStep, ...]:
        """The steps shown (without the elision markers)."""
        return tuple(i for i in self.items if isinstance(i, ShownStep))

    @property
    def cost_chars(self) -> int:
        """What the shown steps cost against the budget: their spans and each step's overhead."""
        return self.chars_after + STEP_OVERHEAD_CHARS * len(self.shown)

    @property
    def elided(self) -> int:
        """How many steps were left out."""
        return sum(i.count for i in self.items if isinstance(i, Elided))


def _span_chars(step: TextStep | CallStep | ResultStep) -> int:
    if isinstance(step, TextStep):
        return len(step.text)
    if isinstance(step, CallStep):
        return len(step.name) + len(step.arguments)
    return len(step.content)


def _clipped(step: TextStep | CallStep | ResultStep, cap: int) -> TextStep | CallStep | ResultStep:
    """``step`` with each span cut in its middle to about ``cap`` characters (one barely over it is
    left whole: the cut's marker would cost more than it saves)."""
    if _span_chars(step) <= cap + CLIP_MARGIN_CHARS:
        return step
    if isinstance(step, TextStep):
        return step.model_copy(update={"text": clip_middle(step.text, cap)})
    if isinstance(step, CallStep):
        name = clip_middle(step.name, MIN_SPAN_CHARS)
        return step.model_copy(
            update={
                "name": name,
                "arguments": clip_middle(step.arguments, max(cap - len(name), MIN_SPAN_CHARS)),
            }
        )
    return step.model_copy(update={"content": clip_middle(step.content, cap)})


def _answered_calls(steps: tuple[TextStep | CallStep | ResultStep, ...]) -> dict[int, int]:
    """For each tool result's index, the index of the call it answers: by ``call_id``, else the
    earliest call not yet answered (TRL's tool messages carry no id)."""
    by_id: dict[str, int] = {}
    pending: list[int] = []
    answered: dict[int, int] = {}
    for k, step in enumerate(steps):
        if isinstance(step, CallStep):
            pending.append(k)
            if step.call_id:
                by_id.setdefault(step.call_id, k)
        elif isinstance(step, ResultStep) and step.role == "tool":
            call = by_id.get(step.call_id) if step.call_id else None
            if call is None and pending:
                call = pending[0]
            if call is not None:
                answered[k] = call
                if call in pending:
                    pending.remove(call)
    return answered


def fit_trajectory(trajectory: Trajectory, budget_chars: int) -> FittedTrace:
    """The steps shown within about ``budget_chars``: the last tool result and its call always,
    then the others from the end back, until the next would not fit; what is left out before
    (or between) them is one ``Elided`` marker per run. Pure and deterministic."""
    steps = trajectory.steps
    span_cap = max(budget_chars // SPAN_SHARE, MIN_SPAN_CHARS)
    answered = _answered_calls(steps)
    pinned: dict[int, int] = {}  # index -> its span cap
    last_result = next((k for k in range(len(steps) - 1, -1, -1) if isinstance(steps[k], ResultStep)), None)
    if last_result is not None:
        pinned[last_result] = max(budget_chars // LAST_RESULT_SHARE, span_cap)
        if last_result in answered:
            pinned[answered[last_result]] = span_cap
    shown: dict[int, TextStep | CallStep | ResultStep] = {
        k: _clipped(steps[k], cap) for k, cap in pinned.items()
    }
    left = budget_chars - sum(_span_chars(s) + STEP_OVERHEAD_CHARS for s in shown.values())
    for k in range(len(steps) - 1, -1, -1):
        if k in pinned:
            continue
        step = _clipped(steps[k], span_cap)
        cost = _span_chars(step) + STEP_OVERHEAD_CHARS
        if cost > left:
            break
        shown[k] = step
        left -= cost
    items: list[ShownStep | Elided] = []
    run = 0
    for k in range(len(steps)):
        if k not in shown:
            run += 1
            continue
        if run:
            items.append(Elided(run))
            run = 0
        call = answered.get(k)
        items.append(ShownStep(k + 1, shown[k], 0 if call is None else call + 1))
    if run:
        items.append(Elided(run))
    return FittedTrace(
        items=tuple(items),
        tools=trajectory.tools,
        total_steps=len(steps),
        calls=trajectory.calls,
        chars_before=trajectory.chars,
        chars_after=sum(_span_chars(s) for s in shown.values()),
    )


def share_budget(trajectories: Sequence[Trajectory], budget_chars: int) -> list[int]:
    """Each trajectory's share of ``budget_chars``, which they share (a comparison of several
    agents' responses): when all fit whole, each gets what it needs and an equal part of the rest;
    else a trajectory that needs less than an equal share gets what it needs, and the others
    split what is left equally. It depends on the trajectories, not on their order; one alone gets
    the whole budget."""
    needs = [t.cost_chars for t in trajectories]
    if sum(needs) <= budget_chars:
        spare = (budget_chars - sum(needs)) // max(len(needs), 1)
        return [need + spare for need in needs]
    shares = list(needs)
    left = budget_chars
    order = sorted(range(len(needs)), key=needs.__getitem__)
    for done, k in enumerate(order):
        level = left // (len(needs) - done)
        if needs[k] > level:  # this one and every larger one get the same equal share
            for rest in order[done:]:
                shares[rest] = level
            break
        left -= needs[k]
    return shares


def fit_shared(trajectories: Sequence[Trajectory | None], budget_chars: int) -> list[FittedTrace | None]:
    """Each trajectory fitted (``fit_trajectory``) to its share of ``budget_chars``
    (``share_budget`` among those given); None (a response without steps) stays None."""
    given = [t for t in trajectories if t is not None]
    shares = iter(share_budget(given, budget_chars))
    return [None if t is None else fit_trajectory(t, next(shares)) for t in trajectories]


def render_trace(fitted: FittedTrace, nonce: str, heading: str = TRACE_HEADING) -> str:
    """The trajectory's text for the judge prompt under ``heading``: each span neutralised and in
    its own tags carrying ``nonce`` (the one the final response's tags carry)."""
    items: list[dict[str, object]] = []
    for item in fitted.items:
        if isinstance(item, Elided):
            items.append({"kind": "elided", "count": item.count})
            continue
        step = item.step
        entry: dict[str, object] = {"kind": step.kind, "number": item.number, "answers": item.answers}
        if isinstance(step, TextStep):
            entry["text"] = neutralise(step.text)
        elif isinstance(step, CallStep):
            entry["text"] = neutralise(f"{step.name}({step.arguments})")
        else:
            entry["text"] = neutralise(step.content)
            entry["role"] = step.role
        items.append(entry)
    tools = [
        {
            "name": neutralise(t.name[:MIN_SPAN_CHARS]),
            "description": neutralise(clip_middle(t.description, TOOL_DESCRIPTION_CHARS)),
        }
        for t in fitted.tools[:MAX_TOOLS_SHOWN]
    ]
    return render_template(
        SHARED_DIR,
        "trace.j2",
        steps=items,
        tools=tools,
        more_tools=max(len(fitted.tools) - MAX_TOOLS_SHOWN, 0),
        total=fitted.total_steps,
        calls=fitted.calls,
        nonce=nonce,
        heading=heading,
    )
