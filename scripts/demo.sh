#!/usr/bin/env bash
# make demo: install what is missing, prepare the SmolLM2 judge, start vLLM on CPU (or reuse a
# judge already healthy on the port), score the bundled sample with the rule reward and the
# judge (judge-eval), stop the server we started, and print where the report is.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PORT=${JUDGE_DEMO_PORT:-8888}
URL="http://127.0.0.1:${PORT}"
OUT=${JUDGE_DEMO_OUT:-out/demo}

bash scripts/setup.sh

if "$PY" -m judge_vllm.cli health --url "$URL" >/dev/null 2>&1; then
  echo "demo: reusing the judge server already running at $URL (left running)"
else
  trap '"$PY" -m judge_vllm.cli stop' EXIT
  echo "demo: starting the vLLM CPU judge on $URL (the first start compiles for 2-3 minutes)"
  "$PY" -m judge_vllm.cli serve --wait --port "$PORT"
fi

JUDGE_MODEL_URL="$URL" "$PY" -m eval.cli \
  --data eval/data/sample.jsonl --config configs/demo.yaml --out "$OUT"

echo
echo "demo: report at $OUT/report.md and $OUT/report.html (plots: $OUT/reward_hist.png, $OUT/agreement.png; per-row scores: $OUT/scores.jsonl)"
