"""The async judge client: requests in, verdicts out, over vLLM's OpenAI-compatible API.

What to ask and how to read the reply come from the judge profile (``judge_vllm.profiles``):
chat profiles go to ``/v1/chat/completions``, raw-prompt profiles to ``/v1/completions``.
One ``openai.AsyncOpenAI`` per client with its own retries off (``max_retries=0``):
tenacity owns retries (see ``judge_vllm.retry``). ``judge_many`` sends one request to
vLLM's ``/v1/chat/completions/batch`` (chat) or one ``/v1/completions`` call with a list
of prompts (completions); when the chat batch endpoint answers 404 (any other
OpenAI-compatible server) it falls back, for good, to concurrent single calls.
Prompts that could overflow the model's context are measured with vLLM's ``/tokenize``
and the graded completion cut by tokens (see ``judge_vllm.context``).

A request may name another profile than the client's own (``JudgeRequest.profile``: a rubric's
``criterion``, a group's ``pairwise`` or ``listwise``): it is asked that profile's way, in a call
of its own, on the same connections, so every judgment a reward needs goes through one client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from pydantic import (
    ValidationError,
)

from judge_prompts import JudgePrompt, clip_middle
from judge_vllm.budget import latest_judge_by
from judge_vllm.context import cut_tokens, fit_trace, join_cut, might_overflow
from judge_vllm.contract import json_verdict, label_verdict, ranking_verdict, verdict_schema
from judge_vllm.errors import (
    JudgeConfigError,
    JudgeError,
    JudgeInputError,
    JudgeParseError,
    JudgeRequestError,
)
from judge_vllm.local_tokenizer import local_token_ids
from judge_vllm.profiles import JudgeProfile
from judge_vllm.redaction import redact_url
from judge_vllm.retry import classify, retrying
from judge_vllm.schemas import (
    JudgeReply,
    JudgeRequest,
    ServerHealth,
    Verdict,
    parse_chat_reply,
    parse_completion_reply,
)
from judge_vllm.settings import JudgeClientConfig

if TYPE_CHECKING:
    from openai._types import RequestOptions

__all__ = ["JudgeClient", "api_root"]

logger = logging.getLogger(__name__)

BATCH_PATH = "/chat/completions/batch"
CHAT_PATH = "/chat/completions"
COMPLETIONS_PATH = "/completions"
CHOICE_MAX_TOKENS = 16
MIN_ATTEMPT_S = 0.05
JSON_HEADERS = {"Content-Type": "application/json"}
# Prompts fitted to the context at once. Each keeps its slot through all its calls, so the first
# prompts in are fitted (and their batches sent) first, not all of a large batch call by call; each
# has at most two /tokenize or /detokenize calls in flight. Unbounded, the calls open a connection
# each, which httpcore's pool then walks for every request (1,024 long prompts: every reward past a
# 10 s timeout).
CONTEXT_FIT_PROMPTS = 8
CONTEXT_FIT_CALLS = 2 * CONTEXT_FIT_PROMPTS
T = TypeVar("T")


class _AskedProfile:
    """One profile as this client asks it: its token budget, endpoint, and its labels' token ids
    (looked up once)."""

    def __init__(self, profile: JudgeProfile, max_tokens: int | None) -> None:
        self.profile = profile
        self.max_tokens = max_tokens or profile.max_tokens
        self.chat = profile.endpoint == "chat"
        self.label_ids: list[int] | None = None
        self.multi_token_labels = False


def api_root(judge_url: str) -> str:
    """The server root (``http://host:port``) for a judge URL given with or without ``/v1``."""
    url = judge_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class JudgeClient:
    """Async client for one judge server. Use ``async with`` or call ``aclose()``."""

    def __init__(self, config: JudgeClientConfig | None = None) -> None:
        self.config = config or JudgeClientConfig()
        self._root = api_root(self.config.judge_url)
        key = self.config.api_key.get_secret_value() if self.config.api_key else "EMPTY"
        # Every call goes through the async openai client (retries are ours: tenacity). vLLM's
        # extras (structured_outputs, logprob_token_ids, the batch endpoint, /tokenize) are POSTed
        # with it as raw JSON and come back as raw responses, read by pydantic TypedDicts. The
        # adapter's semaphore bounds concurrency, so the connection pool does not.
        import openai  # here, not at import: 0.4 s that every reward worker would pay (BENCHMARKS.md)

        self._openai = openai.AsyncOpenAI(
            base_url=self._root + "/v1", api_key=key, max_retries=0, timeout=self.config.attempt_timeout_s
        )
        self.profile = self.config.judge_profile()
        self._own = _AskedProfile(self.profile, self.config.max_tokens)
        self._asked: dict[str, _AskedProfile] = {}
        self._model: str | None = self.config.model
        self._max_model_len: int | None = None
        self._tokenize_supported = True
        self.context_cuts = 0
        self.coarse_fast_verdicts = 0
        self._batch_supported = self.config.use_batch_endpoint
        self._setup_lock = asyncio.Lock()
        self._context_fit_slots = asyncio.Semaphore(CONTEXT_FIT_PROMPTS)

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._openai.close()

    # -- discovery -----------------------------------------------------------------

    @property
    def known_model(self) -> str | None:
        """The model name if configured or already discovered (no I/O)."""
        return self._model

    async def model_name(self) -> str:
        """The configured model, else the first model the server lists at ``/v1/models``."""
        if self._model is None:
            async with self._setup_lock:
                if self._model is None:
                    models = await self._call(lambda timeout: self._openai.models.list(timeout=timeout))
                    if not models.data:
                        raise JudgeRequestError("the judge server lists no model at /v1/models")
                    self._model = models.data[0].id
                    self._max_model_len = getattr(models.data[0], "max_model_len", None)
        return self._model

    async def _tokenize(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """vLLM's ``/tokenize`` reply for ``body``; None for good once the server lacks it."""
        if not self._tokenize_supported:
            return None
        try:
            model = await self.model_name()
            reply = await self._post(self._root + "/tokenize", {"model": model, **body})
        except JudgeRequestError as err:
            logger.info("server has no usable /tokenize (%s): character budgets only", err)
            self._tokenize_supported = False
            return None
        data: dict[str, Any] = json.loads(reply)
        self._max_model_len = data.get("max_model_len", self._max_model_len)
        return data

    async def _detokenize(self, ids: list[int]) -> str:
        model = await self.model_name()
        reply = await self._post(self._root + "/detokenize", {"model": model, "tokens": ids})
        text: str = json.loads(reply)["prompt"]
        return text

    def _asking(self, request: JudgeRequest) -> _AskedProfile:
        """The profile ``request`` is asked by: its own (``request.profile``), else the client's.
        Raises ``JudgeInputError`` for a profile that does not load."""
        if request.profile is None:
            return self._own
        asked = self._asked.get(request.profile)
        if asked is None:
            try:
                profile = self.config.model_copy(update={"profile": request.profile}).judge_profile()
            except JudgeConfigError as err:
                raise JudgeInputError(f"request profile {request.profile!r}: {err}") from None
            asked = self._asked[request.profile] = _AskedProfile(profile, self.config.max_tokens)
        return asked

    async def _label_token_ids(self, asked: _AskedProfile) -> list[int] | None:
        """Token ids of the profile's labels (bare and after a space, where each is one token), via
        vLLM's ``/tokenize``, or the local ``tokenizer`` setting when the server has none (a router
        that forwards only the OpenAI routes); None when the labels cannot be weighed at one
        position (a label of several tokens, JSON output, no tokenizer at all): rewards then use
        the sampled label."""
        if not asked.profile.one_token_labels:
            return None
        if asked.label_ids is None:
            ids: list[int] = []
            for label in asked.profile.labels:
                found = []
                for text in (label, " " + label):
                    tokens = await self._label_tokens(text)
                    if tokens is None:
                        asked.label_ids = []
                        return None
                    if len(tokens) == 1:
                        found.append(tokens[0])
                if not found:
                    logger.info(
                        "label %r is several tokens for %s: rewards use the sampled label", label, self._model
                    )
                    asked.multi_token_labels = True
                    asked.label_ids = []
                    return None
                ids.extend(dict.fromkeys(found))
            asked.label_ids = ids
        return asked.label_ids or None

    async def _label_tokens(self, text: str) -> list[int] | None:
        reply = await self._tokenize({"prompt": text, "add_special_tokens": False})
        if reply is not None:
            return list(reply.get("tokens", []))
        if self.config.tokenizer is None:
            return None
        try:
            return await asyncio.to_thread(local_token_ids, self.config.tokenizer, text)
        except JudgeConfigError as err:
            logger.warning("%s: rewards use the sampled label", err)
            return None

    async def health(self) -> ServerHealth:
        """Reachability and model of the judge server (never raises)."""
        import openai  # loaded by __init__

        try:
            reply = await self._openai.get(self._root + "/health", cast_to=httpx.Response)
            ok = reply.status_code == 200
            model = await self.model_name() if ok else None
            return {
                "reachable": ok,
                "status_code": reply.status_code,
                "model": model,
                "url": redact_url(self._root),
            }
        except (JudgeError, openai.OpenAIError) as err:
            return {
                "reachable": False,
                "error": str(classify(err)),
                "model": None,
                "url": redact_url(self._root),
            }

    # -- judging -------------------------------------------------------------------

    def _sampling(self, asked: _AskedProfile, label_ids: list[int] | None, shown: int = 0) -> dict[str, Any]:
        max_tokens = asked.max_tokens
        profile = asked.profile
        if profile.constraint == "choice" and not label_ids and self.config.max_tokens is None:
            max_tokens = max(max_tokens, CHOICE_MAX_TOKENS)  # labels of unknown length: room for each
        body: dict[str, Any] = {"max_tokens": max_tokens, "temperature": self.config.temperature}
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        if profile.constraint == "choice":
            body["structured_outputs"] = {"choice": list(profile.labels)}
        elif profile.constraint == "regex":
            body["structured_outputs"] = {"regex": profile.constraint_regex(max_tokens, shown)}
        elif profile.constraint == "json":
            schema = verdict_schema(self.config.aspects, self.config.max_explanation_chars)
            body["structured_outputs"] = {"json": schema}
        if label_ids:
            body["logprobs"] = True if asked.chat else 1
            body["logprob_token_ids"] = label_ids
        if asked.chat and self.config.chat_template_kwargs:
            body["chat_template_kwargs"] = self.config.chat_template_kwargs
        return body

    def _render(
        self, asked: _AskedProfile, request: JudgeRequest, completion: str, trace_chars: int | None = None
    ) -> JudgePrompt:
        return asked.profile.render(
            request,
            completion,
            max_prompt_chars=self.config.max_prompt_chars,
            max_completion_chars=self.config.max_completion_chars,
            score_rubric=self.config.score_rubric,
            aspects=self.config.aspects,
            trace_chars=trace_chars,
        )

    def _graded_text(self, asked: _AskedProfile, request: JudgeRequest) -> str:
        """What the judge is shown of the completion: all of it, or the extracted final answer."""
        if asked.profile.judge_input == "final_answer" and request.final_answer is not None:
            return request.final_answer
        return request.completion

    async def _prompt_tokens(self, asked: _AskedProfile, prompt: JudgePrompt) -> int | None:
        measured = await self._tokenize(self._tokenize_body(asked, prompt))
        return None if measured is None else int(measured["count"])

    def _tokenize_body(self, asked: _AskedProfile, prompt: JudgePrompt) -> dict[str, Any]:
        if asked.chat:
            return {"messages": prompt.messages(), "add_generation_prompt": True}
        return {"prompt": prompt.user, "add_special_tokens": True}

    async def _prompt(self, asked: _AskedProfile, request: JudgeRequest) -> JudgePrompt:
        """The request's prompt, its completion cut by tokens if the context needs it."""
        completion = clip_middle(self._graded_text(asked, request), self.config.max_completion_chars)
        prompt = self._render(asked, request, completion)
        if not might_overflow(prompt.text, asked.max_tokens, self._max_model_len):
            return prompt
        async with self._context_fit_slots:
            return await self._fitted(asked, request, completion, prompt)

    async def _fitted(
        self, asked: _AskedProfile, request: JudgeRequest, completion: str, prompt: JudgePrompt
    ) -> JudgePrompt:
        """``prompt`` measured with the server's tokenizer, its completion cut by tokens if too long.
        The cut leaves ``CUT_SLACK_TOKENS`` for the few tokens that shift where the kept ends are
        re-tokenised, so the cut prompt is not measured again (four calls for a long prompt)."""
        measured = await self._tokenize(self._tokenize_body(asked, prompt))
        if measured is None or self._max_model_len is None:
            return prompt
        excess = measured["count"] + asked.max_tokens - self._max_model_len
        if excess <= 0:
            return prompt
        trajectories = request.trajectories()
        if trajectories and asked.profile.shows_trajectory:
            self.context_cuts += 1  # fewer of the agents' steps shown, never a cut reply
            return await fit_trace(
                trajectories, self.config.max_completion_chars, prompt, measured["count"],
                self._max_model_len - asked.max_tokens, lambda chars: self._render(asked, request, completion, chars),
                partial(self._prompt_tokens, asked),
            )  # fmt: skip
        tokenized = await self._tokenize({"prompt": completion, "add_special_tokens": False})
        if tokenized is None:
            return prompt
        head, tail, omitted = cut_tokens(tokenized["tokens"], excess)
        start, end = await asyncio.gather(self._detokenize(head), self._detokenize(tail))
        self.context_cuts += 1
        return self._render(asked, request, join_cut(start, end, omitted))

    def _parse(self, asked: _AskedProfile, reply: JudgeReply, request: JudgeRequest) -> Verdict:
        profile = asked.profile
        if profile.output == "json":
            return json_verdict(reply.text, reply.finish_reason)
        if profile.output == "ranking":
            return ranking_verdict(reply.text, reply.finish_reason, len(request.responses))
        verdict = label_verdict(reply, profile.labels, profile.verdict_pattern)
        if verdict.confidence is None and profile.one_token_labels and not asked.multi_token_labels:
            self._note_coarse_fast_verdict(profile)
        return verdict

    def _note_coarse_fast_verdict(self, profile: JudgeProfile) -> None:
        """A label verdict without label logprobs reads the sampled label only: say so, once, and count."""
        self.coarse_fast_verdicts += 1
        if self.coarse_fast_verdicts == 1:
            logger.warning(
                "profile %s: the judge server at %s returned no label logprobs%s (or the model wrote "
                "the label in several tokens), so rewards are the sampled label only (no probability "
                "weighting, no confidence); serve the judge with vLLM directly or use mode: verdict. "
                "Counted in get_metrics()['coarse_fast_verdicts'].",
                profile.name,
                self._root,
                "" if self._tokenize_supported else " (it has no /tokenize)",
            )

    async def _complete(
        self, path: str, body: dict[str, Any], requests: list[JudgeRequest]
    ) -> list[JudgeReply]:
        """POST a (chat) completion body for ``requests`` and return the reply's choices; the call
        ends by the last of their budgets' ``judge_by`` (``judge_vllm/budget.py``)."""
        reply = await self._post(path, body, latest_judge_by([r.budget for r in requests]))
        try:
            return parse_completion_reply(reply) if path == COMPLETIONS_PATH else parse_chat_reply(reply)
        except ValidationError as err:
            raise JudgeParseError(f"judge reply is not a completion: {err}") from err

    async def _post(self, path: str, body: dict[str, Any], judge_by: float | None = None) -> bytes:
        """POST JSON to ``path`` (under ``/v1`` unless it starts with the server root) with the
        openai client, done by ``judge_by`` when given; the reply's body, unparsed (an error
        status is raised as its error)."""
        url = path if path.startswith(self._root) else self._root + "/v1" + path
        content = json.dumps(body, ensure_ascii=False).encode()

        async def send(timeout: float) -> bytes:
            options: RequestOptions = {"timeout": timeout, "headers": JSON_HEADERS}
            reply = await self._openai.post(url, cast_to=httpx.Response, content=content, options=options)
            return reply.content

        return await self._call(send, judge_by)

    async def _call(self, send: Callable[[float], Awaitable[T]], judge_by: float | None = None) -> T:
        """Run one API call under the retry policy, errors mapped to the judge's tree. Each
        attempt may take ``request_timeout``, and never past what is left of ``judge_timeout``
        or past ``judge_by`` (the latest budget of the requests it carries)."""
        import openai  # loaded by __init__

        started = time.monotonic()
        ends = started + self.config.judge_timeout
        if judge_by is not None:
            ends = min(ends, judge_by)
        async for attempt in retrying(self.config.max_retries, ends - started):
            with attempt:
                left = ends - time.monotonic()
                try:
                    return await send(max(min(self.config.attempt_timeout_s, left), MIN_ATTEMPT_S))
                except (openai.OpenAIError, httpx.HTTPError) as err:
                    raise classify(err, self._root) from err
        raise AssertionError("unreachable: tenacity reraises")  # pragma: no cover

    async def _body(
        self, asked: _AskedProfile, prompts: list[JudgePrompt], label_ids: list[int] | None, shown: int = 0
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": await self.model_name()}
        if asked.chat:
            messages = [p.messages() for p in prompts]
            body["messages"] = messages[0] if len(messages) == 1 else messages
        else:
            texts = [p.user for p in prompts]
            body["prompt"] = texts[0] if len(texts) == 1 else texts
        body.update(self._sampling(asked, label_ids, shown))
        return body

    async def judge(self, request: JudgeRequest) -> Verdict:
        """Judge one request (raises a ``JudgeError`` on failure)."""
        asked = self._asking(request)
        label_ids = await self._label_token_ids(asked)
        body = await self._body(
            asked, [await self._prompt(asked, request)], label_ids, len(request.responses)
        )
        choices = await self._complete(CHAT_PATH if asked.chat else COMPLETIONS_PATH, body, [request])
        if not choices:
            raise JudgeParseError("judge reply has no choices")
        return self._parse(asked, choices[0], request)

    def endpoint(self, items: int) -> str:
        """The path a call carrying ``items`` requests of the client's own profile goes to (for logs)."""
        if not self._own.chat:
            return "/v1" + COMPLETIONS_PATH
        return "/v1" + (BATCH_PATH if self._batch_supported and items > 1 else CHAT_PATH)

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Verdict | JudgeError]:
        """Judge several requests; each slot holds a verdict or that request's error. Requests
        asked by different profiles, or showing different numbers of responses (rankings of
        groups of different sizes), take different constraints: each kind goes in a call of its own."""
        kinds = sorted({_kind(r) for r in requests})
        if len(kinds) <= 1:
            return await self._judge_alike(requests)
        slots = [[k for k, r in enumerate(requests) if _kind(r) == kind] for kind in kinds]
        parts = await asyncio.gather(
            *(self._judge_alike([requests[k] for k in part]) for part in slots), return_exceptions=True
        )
        results: dict[int, Verdict | JudgeError] = {}
        for part, outcomes in zip(slots, parts, strict=True):
            if isinstance(outcomes, BaseException) and not isinstance(outcomes, JudgeError):
                raise outcomes
            for slot, k in enumerate(part):  # a call that failed as a whole fails its own requests
                results[k] = outcomes if isinstance(outcomes, JudgeError) else outcomes[slot]
        return [results[k] for k in range(len(requests))]

    async def _judge_alike(self, requests: list[JudgeRequest]) -> list[Verdict | JudgeError]:
        """Judge requests that share one sampling body (one profile, one constraint)."""
        if not requests:
            return []
        try:
            chat = self._asking(requests[0]).chat
        except JudgeInputError as err:
            return [err] * len(requests)
        if len(requests) > 1 and not chat:
            return await self._judge_batch(requests, COMPLETIONS_PATH)
        if self._batch_supported and len(requests) > 1:
            try:
                return await self._judge_batch(requests, BATCH_PATH)
            except JudgeRequestError as err:
                if err.status_code not in (404, 405):
                    raise
                logger.info("judge server has no %s: using concurrent single calls", BATCH_PATH)
                self._batch_supported = False
        results = await asyncio.gather(*(self.judge(r) for r in requests), return_exceptions=True)
        return [_as_outcome(r) for r in results]

    async def _judge_batch(self, requests: list[JudgeRequest], path: str) -> list[Verdict | JudgeError]:
        """One call for several requests of one profile: vLLM's chat batch endpoint, or a completions
        prompt list."""
        asked = self._asking(requests[0])
        label_ids = await self._label_token_ids(asked)
        prepared = await asyncio.gather(*(self._prompt(asked, r) for r in requests), return_exceptions=True)
        results: list[Verdict | JudgeError | None] = [
            None if isinstance(p, JudgePrompt) else _as_outcome(p) for p in prepared
        ]  # a request that cannot be prepared keeps its error; the others go in one call
        sendable = [i for i, p in enumerate(prepared) if isinstance(p, JudgePrompt)]
        if not sendable:
            return results  # type: ignore[return-value]
        prompts = [prepared[i] for i in sendable]
        body = await self._body(asked, prompts, label_ids, len(requests[0].responses))  # type: ignore[arg-type]
        if asked.chat and len(prompts) == 1:
            body["messages"] = [body["messages"]]  # the batch endpoint takes a list of conversations
        sent = [requests[i] for i in sendable]
        by_index = {choice.index: choice for choice in await self._complete(path, body, sent)}
        for slot, i in enumerate(sendable):
            choice = by_index.get(slot)
            if choice is None:
                results[i] = JudgeParseError(f"batch reply has no choice {slot}")
                continue
            try:
                results[i] = self._parse(asked, choice, requests[i])
            except JudgeError as err:
                results[i] = err
        return results  # type: ignore[return-value]


def _kind(request: JudgeRequest) -> tuple[str, int]:
    """What decides a request's sampling body: its profile and how many responses it shows."""
    return request.profile or "", len(request.responses)


def _as_outcome(result: Verdict | BaseException) -> Verdict | JudgeError:
    """A slot's outcome; an exception raised here, before any reply, is the request's fault."""
    if isinstance(result, Verdict | JudgeError):
        return result
    if isinstance(result, Exception):
        return JudgeInputError(f"request could not be sent: {type(result).__name__}: {result}")
    raise result
