# The two commands of the README. Each does its own set-up (scripts/setup.sh) first.
VENV ?= .venv
export LITELLM_LOCAL_MODEL_COST_MAP = True

.PHONY: demo test setup bench mutation

setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/bin/webarena-gym demo

# Lint, format check and type check first (seconds), then the tests, in TEST_WORKERS processes: a test
# spends about half its time waiting on its browser and site servers, so two workers keep two cores busy.
# -P: the checkout is not on the import path, as for a user.
TEST_WORKERS ?= 2
test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/python -P -m pytest -q -rfE -n $(TEST_WORKERS)

bench: setup
	$(VENV)/bin/python -m webarena_gym.benchmarks

# Mutation scores of the method packages' decision logic against their fast unit tests (docs/benchmarks.md,
# "Mutation scores"). Slow: narrow it, e.g. make mutation MUTATION_TARGETS=policies/plan_mcts/tree.py:tests/test_policies_plan_mcts.py
# MUTATION_ARGS="--sample 150". mutmut is installed here only: the tests never need it.
MUTATION_TARGETS ?= policies/plan_mcts/tree.py:tests/test_policies_plan_mcts.py \
	policies/plan_mcts/search.py:tests/test_policies_plan_mcts.py \
	policies/devils_advocate/policy.py:tests/test_policies_devils_advocate.py \
	policies/coact/text.py:tests/test_policies_coact.py \
	policies/coact/policy.py:tests/test_policies_coact.py \
	policies/plan_and_act/parsing.py:tests/test_policies_plan_and_act.py \
	policies/plan_and_act/policy.py:tests/test_policies_plan_and_act.py \
	policies/agentoccam/memory.py:tests/test_policies_agentoccam.py
MUTATION_ARGS ?=
mutation: setup
	$(VENV)/bin/pip install -q "mutmut==3.8.1"
	@for target in $(MUTATION_TARGETS); do \
		$(VENV)/bin/python scripts/mutation.py $${target%%:*} $${target#*:} $(MUTATION_ARGS) || exit 1; \
	done
