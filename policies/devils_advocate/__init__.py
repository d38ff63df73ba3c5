"""Devil's Advocate (docs/methods/devils_advocate.md): anticipatory reflection, alignment checks with backtracking,
and plan revision across trials, zero-shot.

Per trial: a plan (numbered subtasks) from the start screen, the failed plans and the history. Then
Alg. 1 as a depth-first search over a LIFO stack of (state, action, subtask index): at each state the
action for the current subtask and R remedies, each asked as a follow-up question in the same
conversation ("if that action were wrong, what instead?"), pushed remedies first so the first attempt
runs first and the pop order is a_t, a_t^(R), ..., a_t^(1). After an action the alignment check
describes it in one sentence (the history entry) and says whether it serves the subtask; NO pops the
next entry, going back to its recorded URL (``handle.goto``, no step counted) and re-identifying the
element its action names when the page differs (the element-mapping call); YES asks whether the task
is complete (answer and stop) and whether the subtask is (next subtask), then expands the new state.
An empty stack is a plan failure: the trial ends (``handle.end_trial``), the task's initial state is
restored (``handle.restore(handle.initial)``) and the plan is revised, up to 7 trials; the 30-action
cap holds over all trials. Observations too long for the context budget are summarised first.

One executed action per decision: the loop runs each action and the next ``act`` call judges it;
backtracking, restores and ``note_down`` (which changes nothing in the browser) happen inside a
decision. The trajectory therefore has one step per browser action, plus the answer.

Decisions where the paper leaves a choice open (each an option; the default first):
* ``remedies`` R=2 (the Fig. 4 example), ``remedy_mode="chained"`` (each follow-up continues one
  conversation; ``"independent"`` asks each from the first answer); repeats of the first attempt or of
  an earlier remedy are dropped;
* ``history_mode="append_all"`` (Alg. 1 never prunes ℋ, and it persists across trials with the notes);
  ``"branch_only"`` shows action, check and answer calls only the branch that reached the current
  state; plan revision always reviews everything;
* ``retry_on="self"``: a new trial only after a plan failure; ``"oracle"`` (also registered as
  ``devils_advocate_oracle``) asks the evaluator (``handle.evaluate``) when the agent believes it is
  done and starts another trial if the answer is wrong; such runs are oracle-assisted in every report;
* ``max_trials=7``, ``max_actions=30`` with ``cap_scope="task"`` (every executed action of every trial
  counts, ``note_down`` included, restore navigation not; the loop's interaction budget is set to it);
  ``"trial"`` caps each trial instead;
* ``plan_exhausted="backtrack"``: the last subtask done but the task not is treated as a NO;
  ``"end_trial"`` revises the plan at once;
* ``context_tokens=8192`` (gpt-4-0613's window, the paper's backbone): a call whose prompt plus reply
  would exceed it gets each observation replaced by a summary (one call per distinct page); None
  never summarises;
* states are equal when URL and observation text (whitespace aside) are; element mapping runs only
  for click/type when the fresh page differs from the recorded one;
* a new trial is ``env.reset`` through the handle (Eq. 10 conditions on S_0): on the local suite the
  site data is pristine again, on real WebArena the sites keep what earlier trials changed; each
  trial's notes and outcome in the trajectory say which (``restore_method``, ``site_data``);
* unusable replies get ``max_reasks`` re-asks with a concrete example; an action that stays unusable
  is a no-op, i.e. not pushed; an unusable plan becomes the task itself as one subtask; an
  alignment or completion reply without a clear YES/NO counts as NO; a reply without ``###Answer``
  is used whole; an element-mapping reply without an id keeps the old id;
* an action the browser rejected is judged like any other, with the error shown under Screen 2;
* when no action may run any more (cap or a loop budget), the agent answers from the current screen
  (``give_up``); temperature 1.0 and 512 reply tokens for every call role (paper).

Modules: ``text`` (prompt texts and readers), ``policy`` (the class, registered as ``devils_advocate``
and ``devils_advocate_oracle``).
"""

from webarena_gym.policies.devils_advocate.policy import DevilsAdvocatePolicy, Entry, Screen
from webarena_gym.policies.devils_advocate.text import (
    parse_action,
    parse_alignment,
    parse_answer,
    parse_plan,
    parse_verdict,
)

__all__ = [
    "DevilsAdvocatePolicy",
    "Entry",
    "Screen",
    "parse_action",
    "parse_alignment",
    "parse_answer",
    "parse_plan",
    "parse_verdict",
]
