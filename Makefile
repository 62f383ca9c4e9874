PYTHON ?= python3
export PYTHON

.PHONY: setup test unit demo bench serve stop

setup:  ## install dependencies and prepare the embedded SmolLM2 judge
	bash scripts/setup.sh

test:  ## the whole test suite (unit + end-to-end against a real vLLM CPU judge)
	bash scripts/test.sh

unit:  ## the fast unit tier: no network, no model, no trainer runs (about a minute on 2 cores)
	$(PYTHON) -m pytest -m "not e2e and not slow" -n 2 -q

demo:  ## score the bundled sample with rule and judge, print the report (JUDGE=qwen2.5-coder-1.5b: a real judge)
	JUDGE="$(JUDGE)" bash scripts/demo.sh

bench:  ## benchmarks, written to docs/BENCHMARKS.md
	bash scripts/setup.sh
	$(PYTHON) -m eval.bench

serve:  ## start the CPU judge in the background on :8888
	bash scripts/setup.sh
	$(PYTHON) -m judge_vllm.cli serve --wait

stop:
	$(PYTHON) -m judge_vllm.cli stop
