#!/usr/bin/env bash
# The unit tier on Python 3.10, the oldest Python judge-vllm promises (requires-python), in its own
# environment (.venv310; JUDGE_VLLM_VENV310=path for another). The interpreter: $PYTHON310, else
# python3.10 on the PATH, else pyenv's. Left out, because they need torch or a trainer framework,
# which this environment does not install (the main tier runs them): the TRL, verl and OpenRLHF
# integration modules (and the trajectory tests that run verl's and OpenRLHF's code) and the docs lines
# that start a verl or OpenRLHF run.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${JUDGE_VLLM_VENV310:-.venv310}"
find_python() {
  for candidate in "${PYTHON310:-}" "$(command -v python3.10 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python /root/.pyenv/versions/3.10*/bin/python; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))'; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
if ! PY310="$(find_python)"; then
  if [ "${CI:-}" = "true" ]; then
    echo "unit-py310: no Python 3.10 found (set PYTHON310=/path/to/python3.10): failing under CI" >&2
    exit 1
  fi
  echo "unit-py310: no Python 3.10 found (set PYTHON310): not run" >&2
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PY310" -m venv "$VENV" || exit 1
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[api,tracing,eval]" \
  "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2.3" "pytest-xdist>=3.5" "hypothesis>=6.100" "mypy>=1.10" types-PyYAML \
  opentelemetry-sdk opentelemetry-exporter-otlp psutil transformers tokenizers || exit 1
echo "unit-py310: $("$VENV/bin/python" --version) in $VENV"
"$VENV/bin/python" -m pytest -m "not e2e and not slow" -n 2 -q -p no:cacheprovider \
  --ignore=tests/adapter/integrations/test_trl.py --ignore=tests/adapter/integrations/test_trl_groups.py \
  --ignore=tests/adapter/integrations/test_verl.py \
  --ignore=tests/adapter/integrations/test_openrlhf.py --ignore=tests/adapter/integrations/test_openrlhf_client.py \
  --ignore=tests/adapter/trajectories/test_verl.py --ignore=tests/adapter/trajectories/test_openrlhf.py \
  --ignore=tests/e2e -k "not (main_ppo or train_ppo_ray)"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "unit-py310: pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
