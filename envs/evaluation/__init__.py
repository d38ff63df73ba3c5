"""Parts of the WebArena evaluator that stand on their own (the LLM judge); see envs/evaluator.py."""
