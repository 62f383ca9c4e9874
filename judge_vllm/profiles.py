"""Judge profiles: how to ask the judge, and how to read its answer.

A profile is a folder: Jinja templates plus a ``profile.yaml`` that this module validates
into a ``JudgeProfile``. Built-in profiles live in ``judge_prompts/profiles/<name>/``; a
user's own is any folder (or its ``profile.yaml``) given as ``profile:`` in the reward
config. What a profile fixes:

- the prompt: templates, and the endpoint: ``chat`` (the judge model's chat template) or
  ``completions`` (a raw prompt, no chat template);
- the output contract: labels with a label -> reward map (a reward in [0, 1], or
  ``invalid``: the judge says the graded response is not a valid answer, reward 0), or a
  ``ranking`` of the responses shown (listwise; no labels), the structured-outputs
  constraint (``choice``, ``regex`` or ``json``), where the label sits in the reply
  (``verdict_pattern``), and the token budget;
- what the judge is shown: the whole completion or the final answer our rules extract.

Templates get these variables: ``prompt`` (the question), ``answer`` (the reference),
``completion`` (the graded response or its extracted answer), ``responses`` (a comparison's
responses in the order shown, each cut to its share of the completion budget), ``trace`` (an
agent's steps before its final response, fitted and in nonce tags, for a profile with
``shows_trajectory``; else empty: ``judge_vllm.trajectory``), ``traces`` and ``tags`` (a
comparison's: each response's steps, fitted to its share of the steps' budget, "" when it has
none, and the tag id of its spans: ``a-NONCE`` for response A when any response shows steps,
else the nonce), ``answer_type``,
``rubric`` and ``rubric_name`` (our rubric's per-answer_type include), ``nonce``,
``labels``, ``output``, ``aspects``, ``score_rubric`` (a user-given grading rubric) and the
profile's own ``variables``.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from judge_prompts import (
    PROFILES_DIR,
    JudgePrompt,
    clip_middle,
    neutralise,
    new_nonce,
    render_template,
    rubric_for,
    template_fingerprint,
)
from judge_vllm.contract import INVALID, RANKING_LETTERS, ranking_regex
from judge_vllm.errors import JudgeConfigError, JudgeInputError
from judge_vllm.patterns import compile_user_pattern
from judge_vllm.schemas import JudgeRequest
from judge_vllm.trajectory import TRACE_HEADING, fit_shared, fit_trajectory, render_trace
from judge_vllm.yaml_file import read_yaml_mapping

__all__ = [
    "BUILTIN_PROFILES",
    "FREE_CHARS",
    "INVALID",
    "JudgeProfile",
    "ScoreRubric",
    "builtin_profile_names",
    "load_profile",
]

# In a profile's regex, the number of characters of free text (analysis, feedback) that fit in the
# token budget before the verdict: every token is at least one character, so a reply constrained
# this way always reaches its verdict within max_tokens.
FREE_CHARS = "FREE_CHARS"
# Fixed prompt parts kept per (answer_type, score rubric, aspects); the oldest goes first.
FIXED_CACHE_SIZE = 64
VERDICT_RESERVE_TOKENS = 32
# What a compared response's steps are called in a comparison's prompt.
MEMBER_TRACE_HEADING = "RESPONSE {letter}'S STEPS BEFORE ITS FINAL RESPONSE"
LabelReward = Annotated[float, Field(ge=0.0, le=1.0)] | Literal["invalid"]
PROFILE_FILE = "profile.yaml"


class ScoreRubric(BaseModel):
    """A user-given grading rubric (Prometheus' score rubric): a criterion and what each score means."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criteria: str = Field(min_length=1)
    score1_description: str = Field(min_length=1)
    score2_description: str = Field(min_length=1)
    score3_description: str = Field(min_length=1)
    score4_description: str = Field(min_length=1)
    score5_description: str = Field(min_length=1)


class JudgeProfile(BaseModel):
    """One way to ask a judge and read its answer (see the module docs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    source: str = Field(default="", description="where the prompt comes from (repository, commit)")
    licence: str = ""
    models: list[str] = Field(default_factory=list, description="judge models the profile is made for")
    template_dir: Path
    endpoint: Literal["chat", "completions"] = "chat"
    system_template: str | None = Field(default=None, description="chat only; None = no system message")
    user_template: str = Field(default="user.j2", description="the user message, or the whole raw prompt")
    variables: dict[str, object] = Field(default_factory=dict)
    labels: dict[str, LabelReward] = Field(default_factory=dict, description="none for output: ranking")
    output: Literal["label", "json", "ranking"] = "label"
    constraint: Literal["choice", "regex", "json", "none"] = "choice"
    regex: str | None = Field(
        default=None,
        description=f"the constraint when constraint is regex; {FREE_CHARS} = the free text the token budget allows",
    )
    verdict_pattern: str | None = Field(
        default=None, description="regex whose group 1 is the label (last match wins); None = the whole reply"
    )
    max_tokens: int = Field(default=1, ge=1, le=262_144)
    template_dir_env: str | None = Field(
        default=None,
        description="an environment variable that, when set, names the folder of the templates (a prompt "
        "whose licence keeps it out of the wheel)",
    )
    templates_note: str = Field(default="", description="where to get the templates when they are missing")
    judge_input: Literal["completion", "final_answer"] = "completion"
    needs_answer: bool = True
    compares: bool = Field(
        default=False, description="shows a comparison's responses (group rewards): a request must carry them"
    )
    needs_score_rubric: bool = False
    shows_trajectory: bool = Field(
        default=False,
        description="its templates show an agent's steps (the trace variable; a comparison's: traces and tags); "
        "else the judge sees the final reply only",
    )
    verdict_mode: bool = Field(
        default=False, description="mode: verdict asks for a JSON {score, explanation} instead of a label"
    )
    _fixed_cache: dict[tuple[str | None, ScoreRubric | None, bool], tuple[dict[str, object], str | None]] = (
        PrivateAttr(default_factory=dict)
    )

    @model_validator(mode="after")
    def _consistent(self) -> JudgeProfile:
        if self.constraint == "regex" and not self.regex:
            raise ValueError("constraint: regex needs a regex")
        constraint = self.constraint_regex(64)
        if constraint is not None:  # run by the server's grammar engine, not here: syntax only
            try:
                re.compile(constraint)
            except re.error as err:
                raise ValueError(f"pattern {constraint!r} is not a valid regex: {err}") from None
        # The verdict pattern runs here, on judge replies: probed at load, bounded at each search.
        verdict = (
            compile_user_pattern(self.verdict_pattern, "verdict_pattern") if self.verdict_pattern else None
        )
        if verdict is not None and verdict.groups < 1:
            raise ValueError("verdict_pattern needs a group around the label")
        if self.endpoint == "completions" and self.system_template is not None:
            raise ValueError("the completions endpoint has no system message: drop system_template")
        if self.output == "ranking":
            if self.labels or self.constraint == "choice":
                raise ValueError("output: ranking has no labels: constrain it with a regex (or none)")
        elif all(v == INVALID for v in self.labels.values()):
            raise ValueError("at least one label needs a reward")
        return self

    # -- what to ask ---------------------------------------------------------------------

    @property
    def fingerprint(self) -> str:
        """Changes whenever the profile's templates or settings change (part of the cache key)."""
        settings = self.model_dump_json(exclude={"template_dir"})
        return f"{self.name}:{template_fingerprint(self.template_dir)}:{_short_hash(settings)}"

    @property
    def one_token_labels(self) -> bool:
        """Whether label probabilities can be read at one position (labels must also be one token)."""
        return self.output == "label" and (self.constraint == "choice" or self.verdict_pattern is not None)

    def render(
        self,
        request: JudgeRequest,
        completion: str,
        *,
        max_prompt_chars: int,
        max_completion_chars: int,
        score_rubric: ScoreRubric | None = None,
        aspects: bool = False,
        nonce: str | None = None,
        trace_chars: int | None = None,
    ) -> JudgePrompt:
        """The judge prompt for ``request``, grading ``completion`` (the completion or its final answer).
        A trajectory's steps are fitted to ``trace_chars`` (default: ``max_completion_chars``)."""
        if self.needs_score_rubric and score_rubric is None:
            raise JudgeConfigError(f"profile {self.name!r} needs a score_rubric in the reward config")
        if self.compares and not request.responses:
            raise JudgeInputError(
                f"profile {self.name!r} compares responses: it judges groups (reward_group with group: "
                f"{{mode: {self.name}}}), not one completion"
            )
        shared, system = self._fixed(request.answer_type, score_rubric, aspects)
        share = max_completion_chars // max(len(request.responses), 1)
        nonce = nonce or new_nonce()
        budget = max_completion_chars if trace_chars is None else trace_chars
        trace = ""
        if self.shows_trajectory and request.trajectory is not None:
            heading = str(self.variables.get("trace_heading", TRACE_HEADING))
            trace = render_trace(fit_trajectory(request.trajectory, budget), nonce, heading)
        tags, traces = [nonce] * len(request.responses), [""] * len(request.responses)
        if self.shows_trajectory and any(request.traces):
            tags, traces = _member_traces(request, nonce, budget)
        user = render_template(
            self.template_dir,
            self.user_template,
            **shared,
            prompt=neutralise(clip_middle(request.prompt, max_prompt_chars)),
            answer=neutralise(clip_middle(request.answer, max_prompt_chars)),
            completion=neutralise(clip_middle(completion, max_completion_chars)),
            responses=[neutralise(clip_middle(r, share)) for r in request.responses],
            trace=trace,
            traces=traces,
            tags=tags,
            nonce=nonce,
        )
        return JudgePrompt(system=system, user=user)

    def _fixed(
        self, answer_type: str | None, score_rubric: ScoreRubric | None, aspects: bool
    ) -> tuple[dict[str, object], str | None]:
        """The variables and the system message fixed per answer_type and settings (rendered once)."""
        key = (answer_type, score_rubric, aspects)
        fixed = self._fixed_cache.get(key)
        if fixed is None:
            shared = self._fixed_variables(answer_type, score_rubric, aspects)
            system = None
            if self.system_template is not None:
                system = render_template(self.template_dir, self.system_template, **shared)
            if len(self._fixed_cache) >= FIXED_CACHE_SIZE:  # answer_type is free text: bound the cache
                del self._fixed_cache[next(iter(self._fixed_cache))]
            fixed = self._fixed_cache[key] = (shared, system)
        return fixed

    def _fixed_variables(
        self, answer_type: str | None, score_rubric: ScoreRubric | None, aspects: bool
    ) -> dict[str, object]:
        rubric = rubric_for(answer_type)
        return {
            **self.variables,
            "answer_type": answer_type or "",
            "rubric": f"{rubric}.j2",
            "rubric_name": rubric.upper(),
            "labels": list(self.labels),
            "output": self.output,
            "aspects": aspects,
            "score_rubric": score_rubric.model_dump() if score_rubric else None,
        }

    def constraint_regex(self, max_tokens: int, shown: int = 0) -> str | None:
        """The regex constraint for a token budget (``FREE_CHARS`` filled in); a ranking of
        ``shown`` responses is constrained to exactly that many letters."""
        if self.output == "ranking" and shown:
            return ranking_regex(shown)
        if self.regex is None:
            return None
        return self.regex.replace(FREE_CHARS, str(max(max_tokens - VERDICT_RESERVE_TOKENS, 0)))

    def as_verdict_mode(self, max_tokens: int) -> JudgeProfile:
        """This profile asking for a JSON verdict (``mode: verdict``), if it supports one."""
        if not self.verdict_mode:
            return self
        return self.model_copy(update={"output": "json", "constraint": "json", "max_tokens": max_tokens})


def _member_traces(request: JudgeRequest, nonce: str, budget_chars: int) -> tuple[list[str], list[str]]:
    """A comparison of agents' responses: each response's tag (its letter and ``nonce``: every span
    of response A, its steps and its final response, is in tags ending ``-a-NONCE``) and its steps,
    fitted to its share of ``budget_chars`` ("" for a response without steps)."""
    if len(request.responses) > len(RANKING_LETTERS):
        raise JudgeInputError(
            f"{len(request.responses)} responses: at most {len(RANKING_LETTERS)} are shown with their steps"
        )
    letters = RANKING_LETTERS[: len(request.responses)]
    tags = [f"{letter.lower()}-{nonce}" for letter in letters]
    traces = [
        "" if fitted is None else render_trace(fitted, tag, MEMBER_TRACE_HEADING.format(letter=letter))
        for letter, tag, fitted in zip(letters, tags, fit_shared(request.traces, budget_chars), strict=True)
    ]
    return tags, traces


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# -- loading -------------------------------------------------------------------------------


def builtin_profile_names() -> list[str]:
    """The names of the bundled profiles."""
    return sorted(p.parent.name for p in PROFILES_DIR.glob(f"*/{PROFILE_FILE}"))


BUILTIN_PROFILES = tuple(builtin_profile_names())


def _read_file(path: Path) -> JudgeProfile:
    """The profile a ``profile.yaml`` describes, its templates not looked for (not cached: the
    folder a ``template_dir_env`` names may be set after a failed load)."""
    raw = read_yaml_mapping(path, "judge profile")
    raw.setdefault("name", path.parent.name)
    elsewhere = os.environ.get(str(raw.get("template_dir_env") or ""), "").strip()
    raw["template_dir"] = Path(elsewhere).expanduser().resolve() if elsewhere else (
        path.parent / raw.get("template_dir", ".")
    ).resolve()
    try:
        return JudgeProfile.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'profile'}: {e['msg']}" for e in err.errors())
        raise JudgeConfigError(f"judge profile {path}: {problems}") from None


@cache
def _load_file(path: Path) -> JudgeProfile:
    profile = _read_file(path)
    for template in (profile.system_template, profile.user_template):
        if template is not None and not (profile.template_dir / template).is_file():
            note = f". {profile.templates_note}" if profile.templates_note else ""
            raise JudgeConfigError(
                f"judge profile {path}: template {template} not in {profile.template_dir}{note}"
            )
    return profile


def load_profile(spec: str, *, templates: bool = True) -> JudgeProfile:
    """A bundled profile by name, or a user's profile folder or ``profile.yaml`` path.

    ``templates=False`` reads the ``profile.yaml`` alone (labels, patterns: what its verdicts look
    like) and does not need its templates, which a prompt whose licence keeps it out of the wheel
    (xVerify's) may not have: only a judge that asks with the profile needs them.
    """
    load = _load_file if templates else _read_file
    builtin = PROFILES_DIR / spec / PROFILE_FILE
    if "/" not in spec and builtin.is_file():
        return load(builtin)
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path / PROFILE_FILE
    if path.is_file():
        return load(path.resolve())
    raise JudgeConfigError(
        f"judge profile {spec!r} is neither a bundled profile ({', '.join(BUILTIN_PROFILES)}) "
        f"nor a folder or {PROFILE_FILE} file"
    )
