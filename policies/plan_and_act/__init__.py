"""Plan-and-Act (docs/methods/plan_and_act.md): a planner that writes a high-level plan, a replanner that rewrites it
after every action, and an executor that grounds it in WebRL actions on the simplified HTML page.

Registered variants, the Table 1 rows that need no training (:data:`TABLE1_GRID`, in the table's order):
``plan_and_act_no_planner`` (the executor alone), ``plan_and_act_static`` (a base planner, one plan),
``plan_and_act_dynamic`` (+ dynamic replanning) and ``plan_and_act`` (+ CoT: the full method).
"""

from webarena_gym.policies.plan_and_act.policy import PlanAndActPolicy

TABLE1_GRID = ("plan_and_act_no_planner", "plan_and_act_static", "plan_and_act_dynamic", "plan_and_act")

__all__ = ["TABLE1_GRID", "PlanAndActPolicy"]
