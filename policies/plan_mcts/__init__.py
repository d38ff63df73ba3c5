"""Plan-MCTS (docs/methods/plan_mcts.md): Monte Carlo tree search over natural-language subplans.

Nodes are verified states of the site, edges subplans. Each iteration descends by UCT over subplan
edges to one not executed yet; the Operator grounds it into a few browser actions from its parent
state; a Micro check (was the subplan done?) gates a Macro check (how close is the task now? status
codes A-E averaged over samples), R = r_micro * r_macro; a failed subplan is repaired by the
Reflector (pivot or decompose) and re-executed; a verified state becomes a node whose k=3 candidate
subplans the Planner proposes (Standard, Granular, Alternative); R is averaged into Q along the
path. The search ends at the first success candidate, after N iterations, or when the interaction
budget is spent; the best path is restored and its answer delivered.

Layout: :mod:`~policies.plan_mcts.config` (parameters), :mod:`~policies.plan_mcts.tree` (nodes,
edges, UCT, backpropagation), :mod:`~policies.plan_mcts.prompts` (the five prompts and their
parsers), :mod:`~policies.plan_mcts.search` (the episode's search through the handle),
:mod:`~policies.plan_mcts.policy` (the registered policy and its variants). The user's page is
docs/methods/plan_mcts.md.
"""

from webarena_gym.policies.plan_mcts.config import STATUS_SCORES, SearchConfig
from webarena_gym.policies.plan_mcts.policy import PlanMCTSPolicy
from webarena_gym.policies.plan_mcts.search import PlanSearch

__all__ = ["STATUS_SCORES", "PlanMCTSPolicy", "PlanSearch", "SearchConfig"]
