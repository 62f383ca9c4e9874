# Every target runs in the project's own environment (.venv, made by scripts/setup.sh), never in
# the Python that runs make. JUDGE_VLLM_VENV=path uses another folder. A target installs the part of
# it that it needs on first use (scripts/setup.sh eval, server or test: the stamp each part leaves).
VENV ?= $(or $(JUDGE_VLLM_VENV),.venv)
PYTHON := $(VENV)/bin/python
export JUDGE_VLLM_VENV := $(VENV)

.PHONY: setup test unit unit310 demo bench serve stop lock

$(VENV)/.judge-vllm-%.sha256:
	bash scripts/setup.sh $*

setup:  ## create .venv and install judge-vllm, vLLM for this machine, the test tools and trainers; prepare the SmolLM2 judge
	bash scripts/setup.sh

test:  ## the whole test suite (unit + end-to-end against a real vLLM CPU judge)
	bash scripts/test.sh

unit: $(VENV)/.judge-vllm-test.sha256  ## the fast unit tier: no network, no model, no trainer runs (about a minute on 2 cores)
	$(PYTHON) -m pytest -m "not e2e and not slow" -n 2 -q

unit310:  ## the unit tier on Python 3.10 (.venv310; the interpreter from PYTHON310, the PATH or pyenv)
	bash scripts/unit-py310.sh

demo:  ## score the bundled sample with rule, judge and cascade on the 1.5B judge (JUDGE=smollm2: the quick contract model; JUDGE_URL=a running judge)
	JUDGE="$(JUDGE)" bash scripts/demo.sh

bench: $(VENV)/.judge-vllm-test.sha256  ## benchmarks, written to docs/BENCHMARKS.md
	$(PYTHON) -m eval.bench

serve: $(VENV)/.judge-vllm-server.sha256  ## start the CPU judge in the background on :8888
	$(PYTHON) -m adapter.cli serve --wait

stop: $(VENV)/.judge-vllm-eval.sha256
	$(PYTHON) -m adapter.cli stop

lock:  ## rewrite scripts/cpu-lock.txt from what .venv holds (after a dependency change)
	{ head -2 scripts/cpu-lock.txt; $(PYTHON) -m pip freeze --exclude-editable | sed 's/+cpu$$//' | grep -v '^judge-vllm'; } > scripts/cpu-lock.txt.new
	mv scripts/cpu-lock.txt.new scripts/cpu-lock.txt
