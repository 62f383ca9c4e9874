"""A loopback fake of vLLM's OpenAI-compatible API, for fault injection and overhead benchmarks.

It never stands in for the judge where a test claims the judge works: its "judgment"
is a string match (5 when the reference answer appears in the graded response, else 1),
which is enough to check ordering, caching and fallback. When the prompt shows an agent's
steps with tool results (``<tool-result-NONCE>`` tags, judge_vllm/trajectory.py), the answer
must also appear in the last tool result shown: a final answer the tools never produced (a
tool that failed, a number copied wrong) scores 1, as a judge reading the trace would score it. A
comparison of agents' responses shown with their steps (each response's spans in tags of its
own, ``<response-a-NONCE>``) is judged by that rule for each response: A is preferred unless B
scores higher. A judgment of one agent turn (profile ``step``) scores 5 unless the last tool
result shown says "error". Each request's fate comes from
a ``FaultPlan``: a fixed script of actions first, then random rates.

Actions: ``ok``, ``error`` (500), ``reject`` (400), ``hang`` (never answers),
``garbage`` (200 with invalid JSON content), ``length`` (cut by max_tokens), ``drop``
(closes the connection without answering), ``busy`` (429 with a ``Retry-After``).
``FaultPlan.tokenize=False`` serves no ``/tokenize`` (like a router forwarding only the
OpenAI routes). ``/v1/completions`` (raw-prompt profiles) answers ``FaultPlan.completion_text``
for each prompt of a list; a ``choice`` constraint other than 1-5 gets its first label when
the reference appears in the response, else its second.

With ``api_key`` it answers 401 to a request without ``Authorization: Bearer KEY``; with
``basic_auth`` (``"user:password"``) to one without those credentials as HTTP Basic auth, which is
how a client sends a URL's userinfo (``http://user:password@host``). Like vLLM it answers 404
("The model `x` does not exist. Valid aliases: fake-judge.") to a request for a model it does not
serve.

Its tokenizer is one token per character (``/tokenize``, ``/detokenize``), and like vLLM
it answers 400 to a prompt that overflows its ``max_model_len``. ``GET /fake/stats`` gives its
requests by route and outcome, the items (conversations) it judged and its process's CPU seconds (for benchmarks of a fake in its own
process); ``judged_users`` holds the user message of the last 1,000 items it judged (what a test
checks the prompts by).

Run it as a process: ``python -m judge_vllm.testing.fake_server --port 8899``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import random
import re
import threading
import time
from collections import Counter, deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Action", "FakeJudgeServer", "FaultPlan"]

Action = Literal["ok", "error", "reject", "hang", "garbage", "length", "drop", "busy"]

_STEP_JUDGED = "THE STEP TO JUDGE:"
_REFERENCE = re.compile(r"REFERENCE ANSWER:\n(.*?)\n\n", re.S)
_QUESTION = re.compile(r"QUESTION:\n(.*?)\n\nREFERENCE ANSWER:", re.S)
_RESPONSE = re.compile(r"<response-([0-9a-z]+)>\n(.*)\n</response-\1>", re.S)
_MODEL_ROUTES = (
    "/tokenize",
    "/detokenize",
    "/v1/chat/completions",
    "/v1/chat/completions/batch",
    "/v1/completions",
)
_TOOL_RESULT = re.compile(r"<tool-result-([0-9a-z]+)>\n(.*?)\n</tool-result-\1>", re.S)
# A comparison of agents' responses: each response's spans tagged with its letter and the nonce.
_MEMBER_RESPONSE = re.compile(r"<response-([a-p])-([a-z]+)>\n(.*?)\n</response-\1-\2>", re.S)


class FaultPlan(BaseModel):
    """What the fake server does with each request."""

    model_config = ConfigDict(extra="forbid")

    script: list[Action] = Field(default_factory=list, description="actions for the first requests")
    error_rate: float = 0.0
    hang_rate: float = 0.0
    garbage_rate: float = 0.0
    drop_rate: float = 0.0
    latency_s: float = 0.0
    batch_endpoint: bool = True
    seed: int = 0
    max_model_len: int = 4096
    tokenize: bool = Field(default=True, description="serve /tokenize and /detokenize (a router may not)")
    retry_after_s: float = Field(default=1.0, ge=0.0, description="Retry-After of a 'busy' (429) reply")
    completion_text: str = Field(default="Final Decision: Yes", description="each /v1/completions reply")
    max_concurrency: int | None = Field(
        default=None, ge=1, description="judging requests served at once (like a busy replica); None = any"
    )


def _count_tokens(messages: list[dict[str, Any]]) -> int:
    """The fake chat template: one token per character plus 8 per message."""
    return sum(len(m["content"]) + 8 for m in messages)


# As in a real vocabulary, the binary profile's labels are one token each (ids past Unicode's).
_WORD_TOKENS = {"Yes": 0x110000, "No": 0x110001}
_WORDS_BY_TOKEN = {token: word for word, token in _WORD_TOKENS.items()}


def _tokens(text: str) -> list[int]:
    """The fake tokenizer: a label word alone is one token; any other text one per character."""
    return [_WORD_TOKENS[text]] if text in _WORD_TOKENS else [ord(c) for c in text]


def _fake_score(messages: list[dict[str, Any]]) -> int:
    user = messages[-1]["content"] if messages else ""
    if _STEP_JUDGED in user:  # one agent turn (profile step): it worked unless its tool said error
        results = _TOOL_RESULT.findall(user)
        return 1 if results and "error" in results[-1][1].lower() else 5
    ref = _REFERENCE.search(user)
    reference = ref.group(1).strip() if ref else ""
    members = _MEMBER_RESPONSE.findall(user)
    if members:  # agents' responses compared with their steps: A unless B scores higher
        scores = [
            _traced_score(reply, _member_results(user, letter, nonce), reference)
            for letter, nonce, reply in members
        ]
        return 5 if scores[0] >= max(scores[1:], default=1) else 1
    resp = _RESPONSE.search(user)
    if resp is None:
        return 1
    return _traced_score(resp.group(2), [r for _, r in _TOOL_RESULT.findall(user[: resp.start()])], reference)


def _member_results(user: str, letter: str, nonce: str) -> list[str]:
    """The tool results shown among one compared response's steps."""
    tag = re.escape(f"tool-result-{letter}-{nonce}")
    return re.findall(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.S)


def _traced_score(reply: str, results: list[str], reference: str) -> int:
    """5 when the reference is in the reply and in the last tool result shown (if any), else 1."""
    if not (reference and reference in reply):
        return 1
    return 5 if not results or reference in results[-1] else 1


def _choice(index: int, body: dict[str, Any], messages: list[dict[str, Any]], action: Action) -> dict[str, Any]:
    score = _fake_score(messages)
    fast = "choice" in (body.get("structured_outputs") or {})
    if action == "garbage":
        content, finish = "not json {", "stop"
    elif action == "length":
        content, finish = '{"score": 5, "explan', "length"
    elif fast:  # as vLLM: a one-token cap ends the reply at the label
        labels = body["structured_outputs"]["choice"]
        label = str(score) if "5" in labels else labels[0 if score == 5 or len(labels) == 1 else 1]
        content, finish = label, "length" if body.get("max_tokens") == 1 else "stop"
    else:
        content, finish = json.dumps({"score": score, "explanation": "fake judge"}), "stop"
    choice: dict[str, Any] = {
        "index": index,
        "message": {"role": "assistant", "content": content},
        "finish_reason": finish,
        "logprobs": None,
    }
    if fast and body.get("logprobs"):
        labels = body["structured_outputs"]["choice"]
        tops = [{"token": t, "logprob": 0.0 if t == content else -9999.0} for t in labels]  # as vLLM masks
        choice["logprobs"] = {"content": [{"token": content, "logprob": 0.0, "top_logprobs": tops}]}
    return choice


class FakeJudgeServer:
    """An HTTP/1.1 server on 127.0.0.1, run in a background thread (``with`` starts and stops it)."""

    def __init__(
        self,
        plan: FaultPlan | None = None,
        port: int = 0,
        model: str = "fake-judge",
        api_key: str | None = None,
        basic_auth: str | None = None,
    ) -> None:
        self.plan = plan or FaultPlan()
        self.api_key = api_key
        self._authorization = (
            f"Basic {base64.b64encode(basic_auth.encode()).decode()}" if basic_auth
            else f"Bearer {api_key}" if api_key else None
        )  # fmt: skip
        self.port = port
        self.model = model
        self.counts: Counter[str] = Counter()
        self.last_body: dict[str, Any] | None = None
        self.judged_prompts: Counter[str] = Counter()  # the question of every item it judged
        self.judged_users: deque[str] = deque(maxlen=1000)  # the user message of the last items it judged
        self._slots: asyncio.Semaphore | None = None
        self._script: deque[Action] = deque(self.plan.script)
        self._rng = random.Random(self.plan.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://127.0.0.1:{self.port}"

    def set_plan(self, plan: FaultPlan) -> None:
        """Change behaviour for the requests that follow."""
        self.plan = plan
        self._slots = None
        self._script = deque(plan.script)
        self._rng = random.Random(plan.seed)

    def _next_action(self) -> Action:
        if self._script:
            return self._script.popleft()
        r = self._rng.random()
        for action, rate in (
            ("error", self.plan.error_rate),
            ("hang", self.plan.hang_rate),
            ("garbage", self.plan.garbage_rate),
            ("drop", self.plan.drop_rate),
        ):
            if r < rate:
                return action  # type: ignore[return-value]
            r -= rate
        return "ok"

    # -- HTTP --------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
                length = int(headers.get("content-length", 0))
                body = json.loads(await reader.readexactly(length)) if length else {}
                if self._authorization and headers.get("authorization") != self._authorization:
                    status, payload = 401, {"error": {"message": "invalid credentials"}}
                else:
                    status, payload = await self._route(method, path, body)
                if status == 0:  # drop the connection
                    return
                data = json.dumps(payload).encode()
                retry_after = f"retry-after: {self.plan.retry_after_s}\r\n" if status == 429 else ""
                writer.write(
                    f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{retry_after}"
                    f"content-length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _route(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        path = path.split("?", 1)[0]
        self.counts[path] += 1
        if path == "/health":
            return 200, {}
        if path == "/fake/stats":
            items = sum(self.judged_prompts.values())
            return 200, {"counts": dict(self.counts), "items": items, "cpu_s": time.process_time()}
        if path == "/v1/models":
            card = {
                "id": self.model,
                "object": "model",
                "owned_by": "fake",
                "max_model_len": self.plan.max_model_len,
            }
            return 200, {"object": "list", "data": [card]}
        if path in ("/tokenize", "/detokenize") and not self.plan.tokenize:
            return 404, {"error": {"message": "Not Found"}}
        unserved = self._unserved(path, body)
        if unserved is not None:
            return 404, unserved
        if path == "/tokenize":
            tokens = _tokens(body["prompt"]) if "prompt" in body else []
            count = _count_tokens(body["messages"]) if "messages" in body else len(tokens)
            return 200, {"count": count, "max_model_len": self.plan.max_model_len, "tokens": tokens}
        if path == "/detokenize":
            return 200, {"prompt": "".join(_WORDS_BY_TOKEN.get(t) or chr(t) for t in body["tokens"])}
        if path not in ("/v1/chat/completions", "/v1/chat/completions/batch", "/v1/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        if path.endswith("/batch") and not self.plan.batch_endpoint:
            return 404, {"error": {"message": "Not Found"}}
        self.last_body = body
        if self.plan.max_concurrency is not None:
            if self._slots is None:
                self._slots = asyncio.Semaphore(self.plan.max_concurrency)
            async with self._slots:
                return await self._judge(path, body)
        return await self._judge(path, body)

    def _unserved(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """vLLM's 404 body for a request that names a model this server does not serve."""
        asked = body.get("model")
        if path not in _MODEL_ROUTES or asked in (None, self.model):
            return None
        message = f"The model `{asked}` does not exist. Valid aliases: {self.model}."
        return {"error": {"message": message, "type": "NotFoundError", "param": "model", "code": 404}}

    async def _judge(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        action = self._next_action()
        self.counts[action] += 1
        if self.plan.latency_s:
            await asyncio.sleep(self.plan.latency_s)
        if action == "hang":
            await asyncio.sleep(3600)
        if action == "drop":
            return 0, None
        if action == "error":
            return 500, {"error": {"message": "injected failure", "code": 500}}
        if action == "busy":
            return 429, {"error": {"message": "injected overload", "code": 429}}
        if action == "reject":
            return 400, {"error": {"message": "injected bad request", "code": 400}}
        if path == "/v1/completions":
            return self._completions(body, action)
        conversations = body["messages"] if path.endswith("/batch") else [body["messages"]]
        for conversation in conversations:
            user = conversation[-1]["content"] if conversation else ""
            question = _QUESTION.search(user)
            self.judged_prompts[question.group(1) if question else ""] += 1
            self.judged_users.append(user)
        longest = max(_count_tokens(c) for c in conversations) + body.get("max_tokens", 0)
        if longest > self.plan.max_model_len:
            return 400, {"error": {"message": f"maximum context length is {self.plan.max_model_len} tokens"}}
        choices = [_choice(i, body, conv, action) for i, conv in enumerate(conversations)]
        return 200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", self.model),
            "choices": choices,
        }

    def _completions(self, body: dict[str, Any], action: Action) -> tuple[int, Any]:
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        if max(len(p) for p in prompts) + body.get("max_tokens", 0) > self.plan.max_model_len:
            return 400, {"error": {"message": f"maximum context length is {self.plan.max_model_len} tokens"}}
        text, finish = (self.plan.completion_text, "stop") if action == "ok" else ("garbage", "length")
        choices = [
            {"index": i, "text": text, "finish_reason": finish, "logprobs": None} for i in range(len(prompts))
        ]
        return 200, {
            "id": "cmpl-fake",
            "object": "text_completion",
            "model": body.get("model"),
            "choices": choices,
        }

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> FakeJudgeServer:
        """Start serving in a background thread; returns once the port is bound."""
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="fake-judge", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake judge server did not start")
        return self

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        self._stopping = asyncio.Event()
        self._ready.set()
        await self._stopping.wait()
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        """Stop serving and drop every open connection (like a killed server)."""
        if self._loop and self._thread and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join(10)

    def __enter__(self) -> FakeJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """Serve the fake judge in the foreground."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8899)
    parser.add_argument("--plan", default="{}", help="FaultPlan as JSON")
    args = parser.parse_args()
    server = FakeJudgeServer(FaultPlan.model_validate_json(args.plan), port=args.port).start()
    print(f"fake judge at {server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
