"""One episode's search (docs/methods/plan_mcts.md): selection, simulation (grounding + dual-gating check),
refinement, expansion and backpropagation, then the final path, all through the rollout's handle.

Every state change goes through the handle: a snapshot at each verified node, ``handle.restore`` to go
back to one (exact on the local suite, reset + replay on real sites; each node's view records the
method), exploration through ``handle.step`` (the interaction budget, never the decision budget; an
answer given while exploring is held back by the handle and kept on the node). The answer of the
chosen path is returned to the policy, which delivers it as its one decision.

Decisions where the paper leaves room, next to the code they concern:
* the environment is restored only when it is not already at the node to work from: no action ran
  since it reached or restored the node and the page it shows has the node's fingerprint (after a
  verified subplan it stands at the new child, which the next iteration often continues from);
* every prompt shows the page the environment shows: after a restore, the restored observation,
  never the one cached on the node (a restore that is not exact is then seen for what it is, and
  noted on the node: ``restore_exact``, ``restore_differences``);
* an unusable Planner answer (after the re-asks) leaves the node without candidates, so it is a leaf;
  an unusable Operator answer ends the subplan's execution (an "unrecoverable error"); an
  unusable Micro verdict counts as "no"; an unusable Macro sample counts as status D ("unclear");
  an unusable Reflector answer means no repair;
* the macro status kept in H_P is the most frequent code of the samples, ties going to the worse one;
  a terminal subplan is a success candidate when more than half of the samples say A (micro-only
  reward: when the micro check says yes);
* Action MCTS / Action Search (Table 2): edges are single commands proposed by the Planner and executed
  as they are (no Operator call); Plan Search / Action Search: beam search whose budget N counts
  executions, each level keeping the ``beam_width`` best children by reward;
* Reflection-based refinement (Table 3): the Reflector's diagnosis of a failed subplan is added to the
  Planner's and Operator's context as a lesson; the edge is not rewritten and stays dead;
* when the budget ends and the chosen leaf holds no answer, the Operator runs once more from it with
  a final-answer subplan; if it gives none, the answer is empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from webarena_gym.llm import LLM, LLMBudgetExhausted, Message
from webarena_gym.policies.base import BudgetExhausted, EnvHandle, Obs
from webarena_gym.policies.plan_mcts import prompts as P
from webarena_gym.policies.plan_mcts.config import UNCLEAR_STATUS, SearchConfig
from webarena_gym.policies.plan_mcts.tree import (
    Edge,
    HistoryItem,
    Node,
    Page,
    Step,
    backpropagate,
    descend,
    nodes_of,
    path_to,
    uct_select,
)
from webarena_gym.policies.search_tree import SearchTree, TreeNode
from webarena_gym.wrappers.actions.grammar import InvalidActionError, parse_action

T = TypeVar("T")


class EpisodeOver(Exception):
    """The environment ended the episode under a handle call (a dead browser): nothing left to do."""


class PlanSearch:
    """The search of one episode; :meth:`run` returns the answer to deliver (``None``: the episode
    already ended). The tree stays readable afterwards (:attr:`tree`, :attr:`root`)."""

    def __init__(self, config: SearchConfig, llm: LLM, ctx: P.Context, handle: EnvHandle) -> None:
        self.cfg = config
        self.llm = llm
        self.ctx = ctx
        self.handle = handle
        self.tree = SearchTree(iteration_budget=config.iterations)
        self.root: Node | None = None
        self.at: Node | None = None  # the node the environment is known to be at
        self.here: Page | None = None  # the page the environment showed last (what prompts show)
        self.success: Node | None = None
        self.feedback: list[str] = []  # lessons of the Reflection-based variant
        self.errors: list[str] = []  # model answers that stayed unusable after the re-asks
        self.stopped = ""
        self._view: TreeNode | None = None  # the tree node LLM calls are counted against
        self._current: Edge | None = None  # the edge being executed (marked when the budget cuts it off)

    # -- the episode ------------------------------------------------------------------------------

    def run(self, obs: Obs) -> str | None:
        try:
            self.root = self._root(obs)
            self.expand(self.root)
            (self.mcts if self.cfg.search == "mcts" else self.beam)()
        except (BudgetExhausted, LLMBudgetExhausted) as exc:  # answer from the best path found so far
            self.stopped = "interaction budget spent" if isinstance(exc, BudgetExhausted) else str(exc)
            if self._current is not None and not self._current.executed:
                self._current.view.notes["interrupted"] = self.stopped
        except EpisodeOver:
            self.stopped = "the episode ended"
            return None
        try:
            return self.finish()
        except EpisodeOver:
            return None

    def _root(self, obs: Obs) -> Node:
        token = self.handle.snapshot()
        page = Page.of(obs)
        self.tree = SearchTree.rooted(state=token, url=page.url, status="expanded")
        self.tree.iteration_budget = self.cfg.iterations
        node = Node(token=token, page=page, history=[], depth=0, view=self.tree.root)
        self.at, self.here = node, page
        return node

    def mcts(self) -> None:
        """N iterations of selection, simulation (+ refinement), expansion, backpropagation."""
        assert self.root is not None
        for _ in range(self.cfg.iterations):
            selected = self.select()
            if selected is None:
                self.stopped = "nothing to explore"
                return
            self.tree.iterations += 1
            node, path = selected
            edge = path[-1]
            if edge.executed:  # a dead, terminal or unexpandable leaf: back up its stored value again
                backpropagate(path, edge.last_R)
                continue
            reward = self.simulate(node, edge)
            if edge.child is not None:
                self.expand(edge.child)
            backpropagate(path, reward)
            if edge.child is not None and edge.child.success:
                self.success = self.success or edge.child
                if self.cfg.early_stop:
                    self.stopped = "success candidate found"
                    return
        self.stopped = "iteration budget spent"

    def select(self) -> tuple[Node, list[Edge]] | None:
        """Descend by UCT until the chosen edge has not been executed, or leads to a node with no
        candidates (dead, terminal, at the depth limit, or unexpandable)."""
        assert self.root is not None
        node, path = self.root, []
        if not node.edges:
            return None
        while True:
            edge = uct_select(node.edges, self.cfg.c)
            path.append(edge)
            if edge.child is None or not edge.child.edges:
                return node, path
            node = edge.child

    def beam(self) -> None:
        """Plan Search / Action Search (Table 2): level by level, execute every candidate of the kept
        nodes, keep the ``beam_width`` best children by reward; N counts executions."""
        assert self.root is not None
        frontier = [self.root]
        while frontier:
            kept: list[Edge] = []
            for node in frontier:
                for edge in node.edges:
                    if self.tree.iterations >= self.cfg.iterations:
                        self.stopped = "iteration budget spent"
                        return
                    self.tree.iterations += 1
                    backpropagate([edge], self.simulate(node, edge))
                    if edge.child is None:
                        continue
                    kept.append(edge)
                    if edge.child.success:
                        self.success = self.success or edge.child
                        if self.cfg.early_stop:
                            self.stopped = "success candidate found"
                            return
            best = sorted(kept, key=lambda e: e.last_R, reverse=True)[: self.cfg.beam_width]
            for edge in best:
                self.expand(edge.child)  # type: ignore[arg-type]
            frontier = [e.child for e in best if e.child is not None and e.child.edges]
        self.stopped = "nothing left to expand"

    # -- phases -----------------------------------------------------------------------------------

    def simulate(self, node: Node, edge: Edge) -> float:
        """Ground the subplan from ``node`` (Operator), check it (micro, macro), repair it once it
        failed (Reflector), and make the state reached a node when it is verified. Returns R."""
        self._view, self._current = edge.view, edge
        edge.view.notes["iteration"] = self.tree.iterations
        before = start = self.go(node)
        try:
            after = self.operate(node, edge.subplan, before, edge.steps, direct=self.cfg.granularity == "action")
            verified = self.micro(edge, edge.steps, before, after)
            for _ in range(self.cfg.refines):
                if verified:
                    break
                repair = self.reflect(edge.subplan, edge.steps, after)
                if repair is None:
                    break
                edge.view.notes.setdefault("refinements", []).append(
                    {
                        "failed": edge.subplan,
                        "reason": repair.reason,
                        "revised": repair.revised_plan,
                        "actions": [s.action for s in edge.steps],  # what was run before the repair
                    }
                )
                edge.subplan = edge.view.label = repair.revised_plan
                if self.cfg.refine_from == "parent":  # the failed attempt is undone and left off the path
                    before = start = self.go(node)
                    edge.steps.clear()
                else:  # on-policy repair: continue from the failed state (the default)
                    before = after
                segment: list[Step] = []
                try:
                    after = self.operate(node, edge.subplan, before, segment)
                finally:
                    edge.steps += segment
                verified = self.micro(edge, segment, before, after)
        finally:
            edge.view.actions = [s.action for s in edge.steps]
        if not verified and self.cfg.refinement == "reflection":
            lesson = self.reflect(edge.subplan, edge.steps, after)
            if lesson is not None:
                self.feedback.append(f'"{edge.subplan}" failed: {lesson.reason} Suggested: {lesson.revised_plan}')
        statuses: list[tuple[str, str]] = []
        r_macro = 0.0
        if verified and self.cfg.reward != "micro":
            statuses = self.macro(node, edge, start, after)  # the whole step: from the node's page
            r_macro = sum(self.cfg.status_scores[code] for code, _ in statuses) / len(statuses)
        reward = {"dual": float(verified) * r_macro, "micro": float(verified), "macro": r_macro}[self.cfg.reward]
        answer = edge.steps[-1].answer if edge.steps else None
        edge.last_R = reward
        edge.view.reward, edge.view.answer, edge.view.url = reward, answer, after.url
        if statuses:
            edge.view.notes["macro"] = [code for code, _ in statuses]
        if verified or self.cfg.expand_after_failure:
            edge.child = self._child(node, edge, after, verified, statuses, r_macro, answer)
        else:
            edge.dead = True
            edge.view.status = "dead"
        return reward

    def _child(
        self,
        node: Node,
        edge: Edge,
        after: Page,
        verified: bool,
        statuses: list[tuple[str, str]],
        r_macro: float,
        answer: str | None,
    ) -> Node:
        token = self.handle.snapshot()
        status = majority([code for code, _ in statuses])
        notes = statuses[-1][1] if statuses else ""
        item = HistoryItem(edge.subplan, verified, status, r_macro if statuses else None, notes)
        child = Node(
            token=token,
            page=after,
            history=[*node.history, item],
            depth=node.depth + 1,
            view=edge.view,
            path_steps=[*node.path_steps, *edge.steps],
            answer=answer,
            macro=r_macro,
            failed=not verified,
        )
        child.terminal = verified and bool(answer and answer.strip())  # a success candidate needs a non-empty answer
        if child.terminal:
            codes = [code for code, _ in statuses]
            child.success = codes.count("A") * 2 > len(codes) if codes else self.cfg.reward == "micro"
        edge.view.state = token
        edge.view.status = "terminal" if child.terminal else "expanded" if verified else "failed"
        self.at = child
        return child

    def expand(self, node: Node) -> None:
        """The Planner's k candidates from a verified (or, optionally, failed) state (Expansion)."""
        if node.terminal or node.depth >= self.cfg.max_depth:
            return
        self._view = node.view
        actions = self.cfg.granularity == "action"
        messages = P.planner_messages(
            self.ctx,
            self.cfg.width,
            node.history,
            node.path_steps,
            node.page,
            actions=actions,
            feedback=self.feedback,
        )
        candidates = self.ask("planner", messages, lambda text: self._candidates(text, actions))
        for i, candidate in enumerate(candidates or ()):
            view = self.tree.add(
                node.view,
                label=candidate.subplan,
                status="open",
                notes={"kind": P.variation_kind(i), "thought": candidate.thought},
            )
            node.edges.append(Edge(candidate.subplan, candidate.thought, P.variation_kind(i), view))

    def _candidates(self, text: str, actions: bool) -> list[P.Candidate]:
        candidates = P.parse_subplans(text, self.cfg.width)
        if not actions:
            return candidates
        usable = []
        for c in candidates:
            try:
                commands = parse_action(c.subplan, self.ctx.commands)
            except InvalidActionError:
                continue
            if len(commands) == 1:
                usable.append(P.Candidate(c.thought, str(commands[0])))
        if not usable:
            raise P.AnswerError("no candidate is one valid command of the action list")
        return usable

    def operate(self, node: Node, subplan: str, page: Page, steps: list[Step], direct: bool = False) -> Page:
        """Ground ``subplan`` into actions from the current state, appending each to ``steps`` (h_loc),
        until ``subplan_done``, an answer, an unusable answer or the step cap; the last page.
        ``direct``: the subplan is itself one command (the action-level baselines), run as it is."""
        if direct:
            return self._run(subplan, page, steps)
        start = len(steps)
        for _ in range(self.cfg.operator_steps):
            messages = P.operator_messages(
                self.ctx, subplan, node.history, node.path_steps, steps[start:], page, self.feedback
            )
            parsed = self.ask("operator", messages, lambda text: P.parse_operator(text, self.ctx.commands))
            if parsed is None:  # an unrecoverable error; ask() noted it on the node
                break
            action = parsed[0]
            if action == P.DONE:
                break
            page = self._run(action, page, steps)
            if steps[-1].answer is not None:
                break
        return page

    def _run(self, action: str, page: Page, steps: list[Step]) -> Page:
        """One action through the handle (BudgetExhausted propagates: the search ends)."""
        obs, _, _, _, info = self.handle.step(action)
        if self.handle.done:
            raise EpisodeOver
        if "answer" in info:  # held back: the page stays as it was
            steps.append(Step(action, url=page.url, answer=str(info["answer"])))
            return page
        self.at = None
        after = self.here = Page.of(obs)
        steps.append(Step(action, error=after.error, url=after.url))
        return after

    def micro(self, edge: Edge, steps: list[Step], before: Page, after: Page) -> bool:
        """r_micro; the macro-only ablation has no micro gate (every execution counts as verified)."""
        if self.cfg.reward == "macro":
            return True
        messages = P.micro_messages(self.ctx, edge.subplan, steps, before, after)
        verdict = self.ask("micro", messages, P.parse_micro)
        done = bool(verdict and verdict[0])
        edge.view.notes.setdefault("micro", []).append("yes" if done else "no")
        return done

    def macro(self, node: Node, edge: Edge, before: Page, after: Page) -> list[tuple[str, str]]:
        """``macro_samples`` independent checks of the state reached: (status code, notes) each."""
        messages = P.macro_messages(self.ctx, edge.subplan, node.history, node.path_steps, edge.steps, before, after)
        out = []
        for _ in range(self.cfg.macro_samples):
            found = self.ask("macro", messages, P.parse_macro)
            out.append(found if found is not None else (UNCLEAR_STATUS, ""))
        return out

    def reflect(self, subplan: str, steps: list[Step], last: Page) -> P.Repair | None:
        return self.ask("reflector", P.reflector_messages(self.ctx, subplan, steps, last), P.parse_reflection)

    # -- state, answers, the final path -----------------------------------------------------------

    def go(self, node: Node) -> Page:
        """Bring the environment to ``node`` and return the page it shows there. The restore is skipped
        when the environment is there already: no action ran since it reached or restored the node,
        and the page it shows still has the node's fingerprint."""
        if self.at is node and self.here is not None and self.here.fingerprint == node.page.fingerprint:
            return self.here
        obs, info = self.handle.restore(node.token)
        page = Page.of(obs)
        notes = node.view.notes
        notes["restores"] = int(notes.get("restores", 0)) + 1
        notes["restore_method"] = info.get("restore_method")
        if page.url and page.url != node.page.url:
            notes["restore_url_mismatch"] = page.url
        if info.get("restore_exact") is False:
            notes["restore_exact"] = False
            notes["restore_differences"] = list(info.get("restore_differences") or ())
        self.at, self.here = node, page
        return page

    def finish(self) -> str:
        """Choose the final leaf, bring the environment there and return its answer."""
        assert self.root is not None
        leaf = self.choose()
        page = self.go(leaf)
        self.tree.final_path = [self.root.view.id, *(e.view.id for e in path_to(self.root, leaf))]
        if leaf.terminal and leaf.answer is not None:
            return leaf.answer
        return self.final_answer(leaf, page)

    def choose(self) -> Node:
        """The first success candidate; else the leaf ``final_select`` picks."""
        assert self.root is not None
        if self.success is not None:
            return self.success
        verified = [n for n in nodes_of(self.root) if n is not self.root and not n.failed]
        if self.cfg.final_select == "best_macro":
            return max(verified, key=lambda n: (n.macro, n.terminal, n.depth), default=self.root)

        path = descend(self.root, (lambda e: e.Q) if self.cfg.final_select == "max_q" else (lambda e: e.N))
        return path[-1].child if path and path[-1].child is not None else self.root

    def final_answer(self, leaf: Node, page: Page) -> str:
        """The leaf gave no answer: run the Operator once more with the final-answer subplan, from
        ``page`` (the leaf as the environment shows it)."""
        subplan = P.texts()["final_subplan"]
        view = self.tree.add(leaf.view, label=subplan, status="open", notes={"kind": "final answer"})
        self._view = view
        steps: list[Step] = []
        try:
            page = self.operate(leaf, subplan, page, steps)
        except (BudgetExhausted, LLMBudgetExhausted):
            pass
        finally:
            view.actions = [s.action for s in steps]
        answer = steps[-1].answer if steps and steps[-1].answer is not None else None
        view.status, view.answer, view.url = "terminal", answer, page.url
        self.tree.final_path.append(view.id)
        return answer if answer is not None else ""

    def path_actions(self) -> int:
        """Atomic actions on the delivered path (the paper's path length / step length)."""
        return sum(len(self.tree.nodes[i].actions) for i in self.tree.final_path)

    # -- model calls ------------------------------------------------------------------------------

    def ask(self, role: str, messages: list[Message], parse: Callable[[str], T]) -> T | None:
        """One call of ``role``, re-asked up to ``max_reasks`` times with a concrete example of the
        expected form when the answer does not parse; ``None`` when it never does."""
        error = ""
        for _ in range(self.cfg.max_reasks + 1):
            completion = self.llm.complete(role, messages)
            if self._view is not None:
                self._view.llm_calls += 1
            try:
                return parse(completion.text)
            except P.AnswerError as exc:
                error = str(exc)
                messages = [*messages, {"role": "assistant", "content": completion.text}, P.reask(role, error)]
        self.errors.append(f"{role}: {error}")
        if self._view is not None:
            self._view.notes.setdefault("unusable_answers", []).append(f"{role}: {error}")
        return None


def majority(codes: list[str]) -> str | None:
    """The most frequent status code; ties go to the worse code (E is worst)."""
    if not codes:
        return None
    counts = Counter(codes)
    return max(counts, key=lambda code: (counts[code], code))


def summary(search: PlanSearch) -> dict[str, Any]:
    """What the policy records as its state after the decision."""
    return {
        "iterations": search.tree.iterations,
        "iteration_budget": search.cfg.iterations,
        "stopped": search.stopped,
        "final_path": list(search.tree.final_path),
        "path_actions": search.path_actions(),
        "feedback": list(search.feedback),
        "unusable_answers": list(search.errors),
    }
