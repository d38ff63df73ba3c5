# The two commands of the README. Each does its own set-up (scripts/setup.sh) first.
VENV ?= .venv
export LITELLM_LOCAL_MODEL_COST_MAP = True

.PHONY: demo test setup bench

setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/bin/webarena-gym demo

# Lint, format check and type check first (seconds), then the tests.
test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/python -P -m pytest -q -rfE  # -P: the checkout is not on the import path, as for a user

bench: setup
	$(VENV)/bin/python -m webarena_gym.benchmarks
