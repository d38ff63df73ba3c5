"""AgentOccam (docs/methods/agentoccam.md): one LLM call per step on the aligned observation and
action spaces, with a branch/prune plan tree, pivotal-node history, and the optional judge variant.

Per step: build the prompt (system: instruction with the output fields and the enabled commands;
user: OBJECTIVE, PREVIOUS PLANS, INTERACTION HISTORY, CURRENT OBSERVATION, empty sections left out),
call the actor, parse the fields, validate the ACTION against the page (re-ask with a penalty sentence
when invalid), store the page's pivotal-node highlight, update the plan tree (``branch``/``prune``/
``note``; ``prune`` navigates back through ``handle.goto``), and hand the command to the
``agentoccam`` action wrapper. ``note``/``branch``/``prune`` are browser no-ops there but still count
as steps (AgentOccam counted every action it took). The judge variant asks the actor for all suitable
actions and lets a ``judge`` call pick one.

Switches for the ablation rows the policy controls: ``planning`` (branch/prune and the plan tree) and
``history`` (interaction history and its summary field); the preset follows them unless given. The
authors' code fixes the numbers the paper leaves out, which are the defaults here: temperature 0.5,
top_p 0.95, 20 steps, history window 3, pivotal highlights < 30 nodes and < 200 words. The last step
of the episode's budget (``TaskSpec.budget``, which a study's ``--max-steps`` sets) carries the
warning to answer now; an episode the loop stops at the budget answers AgentOccam's failure message.

Decisions on the reference code's quirks and on what the paper leaves open:
* replies are capped at ``max_tokens=1024`` for the actor and the judge (the reference sets no cap): a
  structured answer of five fields fits with room to spare, and an uncapped local model can generate
  until the episode is killed;
* invalid-action re-asks are bounded (``max_reasks``; the reference re-asked without end); when spent,
  the decision sends nothing, the failure becomes a note on the active plan and the next step asks again;
* ids are validated exactly against the ids the page shows (the action wrapper's ``page_ids``),
  not as substrings of the observation text;
* a new plan's id is the largest id so far + 1 (the reference used the active id + 1, which can reuse
  the id of a pruned node); ids therefore stay unique;
* ``prune`` hides the later siblings of the resumed plan *with* their subtrees (the reference hid only
  the sibling nodes), so an abandoned branch disappears entirely;
* ``prune`` clears the resumed plan's notes as the reference does: what they said survives in its
  history, which now holds the ``note`` steps taken beneath it;
* the STEP input section is not rendered (the reference's renderer never emitted it either; the
  final-step warning carries the budget);
* an action the env reports as failed (``last_action_error``) is noted on the active plan, the
  generalisation of the reference's "invalid syntax after execution" note;
* the judge's shuffle is seeded per episode (``judge_seed`` and the task id), not once per process,
  so an episode replays the same way whatever ran before it;
* a prune may not be combined with a browser command in one ACTION (its page changes first), and at
  most one browser command runs per step (the action wrapper's rule);
* ``goto`` is not accepted (the reference silently took it; the ``agentoccam`` preset does not enable
  it) and ``prune``'s return uses the rollout's recorded ``handle.goto`` instead.

Modules: ``text`` (prompt texts, output parsing), ``memory`` (plan tree, step records, history),
``policy`` (the class, registered as ``agentoccam`` and ``agentoccam_judge``).
"""

from webarena_gym.policies.agentoccam.memory import (
    PlanError,
    PlanNode,
    PlanTree,
    StepRecord,
    render_history,
    replayed_observation,
)
from webarena_gym.policies.agentoccam.policy import AgentOccamPolicy
from webarena_gym.policies.agentoccam.text import parse_candidates, parse_fields

__all__ = [
    "AgentOccamPolicy",
    "PlanError",
    "PlanNode",
    "PlanTree",
    "StepRecord",
    "parse_candidates",
    "parse_fields",
    "render_history",
    "replayed_observation",
]
