# The two commands of the README. Each does its own set-up (scripts/setup.sh) first.
VENV ?= .venv
export LITELLM_LOCAL_MODEL_COST_MAP = True

.PHONY: demo test setup bench

setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/bin/webarena-gym demo

test: setup
	$(VENV)/bin/python -m pytest -q -rfE

bench: setup
	$(VENV)/bin/python -m benchmarks
