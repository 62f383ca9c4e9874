#!/usr/bin/env bash
# The whole test suite: ruff, mypy, the unit tier on Python 3.10, unit tests, then end-to-end tests against a real vLLM CPU judge
# that tests/conftest.py starts once. pytest's "no tests collected" (exit 5) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${JUDGE_VLLM_VENV:-.venv}/bin/python"
bash scripts/setup.sh || exit 1
"$PY" -m ruff check . || exit 1
"$PY" -m mypy || exit 1
bash scripts/unit-py310.sh || exit 1  # the unit tier on Python 3.10 too (requires-python)
"$PY" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "test: pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
