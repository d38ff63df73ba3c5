"""CoAct (docs/methods/coact.md): a global planning agent and a local execution agent sharing one web task.

The global planner (call role ``global_planner``) writes a global plan of phases, each a subtask and
the state expected once it is done; it answers the local agent's requests for a new plan (``decide``:
``revise`` the plan, or ``overrule`` the request with suggestions) and collates the final answer. The
local agent (call role ``local_agent``) writes a local plan of numbered WebArena actions for the phase at
hand, runs it, and checks the outcome against the expected state (``pass_check`` after a clean run,
``false_check`` after an exception): ``move`` to the next phase, ``revise`` its own plan, or
``request`` a new global plan. Each role has its own model and settings (``global_planner_model=``,
``local_agent_max_tokens=`` ...).

CoAct's state machine (phases handed between the planner and the local agent) runs inside ``act``: a
local plan's actions are queued and returned one per ``act`` call, so the rollout loop, its budgets and
the trajectory stay the standard ones. Counters (exchanges, local revisions, global re-plans, executed
actions) and a trace of every call are in ``state()``. Variants: ``coact``; ``coact_fs`` (force stop);
``coact_fs_search`` (force stop and the search step, with a pluggable ``search`` function; offline
default none, reported in ``config()``).

Decisions on what the paper leaves open, each a constructor option:

* an *exchange* is a hand-off between the agents: the planner handing a phase to the local agent, a
  request reaching the planner, the planner's answer reaching the local agent. The hand-off is
  counted before the local plan is asked for, and every limit is checked before every LLM call, so a
  stop never pays for a call whose result it throws away (rather than counting after the call);
* force stop (``force_stop``, ``fs_limit=10``, unreported in the paper): more than ``fs_limit``
  exchanges end the dialogue and the planner's collation answers; with force stop on, the other forced
  ends (round limit, WebArena's early stops, the last step of the decision budget) also answer through
  the collation;
* without force stop, the round limit (``max_rounds=20`` exchanges, unreported) and WebArena's early
  stops (``parse_failure_th=3`` malformed answers in a row, ``repeat_th=3`` repeated actions) end the
  episode the way WebArena's runner does, with ``stop [Early stop: <reason>]`` and no collation; the
  paper's pseudo-code sent early stops through the collation, its stopping rules and the code release
  did not. The
  round limit also bounds the dialogue when no LLM call leads to an env action;
* ``max_local_revisions=3`` per phase (then the check's ``revise`` becomes a ``request``) and
  ``max_global_replans=3`` (then ``decide``'s ``revise`` becomes ``overrule``), both unreported; a new
  global plan starts its phases' revision counts afresh;
* after a global ``revise`` the work restarts at phase 1 of the new plan, from the current page (as the
  code release does);
* the local agent sees its phase's subtask as OBJECTIVE plus OVERALL TASK and EXPECTED STATE; the
  checks also see the local plan and its numbered results (URL reached or error); the collation sees
  every executed action, every check and decision, and why the work stopped;
* a local plan's ``stop [answer]`` ends the dialogue: the collation still runs (Algorithm 1's
  validation summary) and the local agent's answer is delivered unless ``collation_overrides_answer``;
  when every phase passed without a stop, the collation's ``FINAL ANSWER:`` line is the answer;
* malformed answers: ``max_reasks=1`` re-ask each (one retry), with a concrete example of
  the expected form; then the fallbacks: global plan -> one phase, the task itself; local
  plan without a readable action line -> an execution exception (``false_check``); a plan line that
  does not parse -> an exception when its turn comes; check -> ``revise``; decide -> ``overrule``;
  collation -> the local agent's answer or ``N/A``;
* the local plan's worked examples are the project's own, in the ``**Action k:**`` form the prompt asks
  for (the code release reused WebArena's single-action examples), as user/assistant turns;
* search step: before ``global_plan`` and the planner's ``revise`` (Fig. 1: "search-based replan"),
  ``search(goal, url)`` returns passages, each cut to ``search_max_words=100`` words, added as SEARCH
  KNOWLEDGE; ``search`` is a callable or ``"package.module:function"``;
* one local agent (``n_local_agents=1``; Algorithm 1 allows several, nothing else does);
* URLs are shown as the env gives them (no mapping to the real sites' addresses).
"""

from webarena_gym.policies.coact.policy import GLOBAL, LOCAL, CoActPolicy, CoActState, resolve_search
from webarena_gym.policies.coact.text import (
    MalformedOutput,
    Phase,
    PlanStep,
    parse_collation,
    parse_decision,
    parse_global_plan,
    parse_local_plan,
)

__all__ = [
    "GLOBAL",
    "LOCAL",
    "CoActPolicy",
    "CoActState",
    "MalformedOutput",
    "Phase",
    "PlanStep",
    "parse_collation",
    "parse_decision",
    "parse_global_plan",
    "parse_local_plan",
    "resolve_search",
]
