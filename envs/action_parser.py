"""The one parse of an agent's action string: what the env checks is exactly what runs.

An action is Python call syntax, one call per statement (``click('12')``, ``fill('5', "text")``), each
argument a literal (string, number, bool, None, or a list/tuple/dict of them). The whole string must be
such calls: text before or after them (``Action: click('12')``, a fenced block) is refused, never
skipped. BrowserGym's own executor skips such text when it is not strict, so an action that the env's
checks could not read used to run all the same; the env now checks the calls parsed here and hands the
executor only their canonical re-serialisation (:func:`canonical`), so nothing it did not check can run.

Parsing uses Python's ``ast`` (linear in the input, unlike BrowserGym's parser); nothing is evaluated
except literals (``ast.literal_eval`` of each argument node).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any


class ActionSyntaxError(ValueError):
    """The action string is not a sequence of calls with literal arguments; the message says why."""


@dataclass(frozen=True)
class ActionCall:
    """One parsed call: its function name and literal arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def argument(self, index: int, keyword: str) -> Any:
        """An argument by keyword, else by position; None when the call has neither."""
        named = dict(self.kwargs)
        if keyword in named:
            return named[keyword]
        return self.args[index] if index < len(self.args) else None

    def code(self) -> str:
        """The call re-serialised from its parsed values (``repr`` of literals is a literal)."""
        parts = [repr(arg) for arg in self.args] + [f"{key}={value!r}" for key, value in self.kwargs]
        return f"{self.name}({', '.join(parts)})"


def parse_action(text: str) -> tuple[ActionCall, ...]:
    """The calls of ``text`` (surrounding blank space ignored); :class:`ActionSyntaxError` for anything else."""
    source = text.strip()
    if not source:
        raise ActionSyntaxError("the action is empty; write one call such as click('12')")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        where = f" (line {exc.lineno}, column {exc.offset})" if exc.lineno else ""
        raise ActionSyntaxError(
            f"the action is not a function call{where}; write only the call, such as click('12'), "
            "with no text, quotes or code fences around it"
        ) from exc
    if not tree.body:  # only comments
        raise ActionSyntaxError("the action is empty; write one call such as click('12')")
    return tuple(_call(statement) for statement in tree.body)


def canonical(calls: tuple[ActionCall, ...]) -> str:
    """The action string that runs: the parsed calls, one per line."""
    return "\n".join(call.code() for call in calls)


def _call(statement: ast.stmt) -> ActionCall:
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        raise ActionSyntaxError(f"line {statement.lineno} is not a function call; an action is only calls")
    node = statement.value
    if not isinstance(node.func, ast.Name):
        raise ActionSyntaxError(f"line {statement.lineno}: call an action by its plain name, such as click(...)")
    name = node.func.id
    args = tuple(_literal(arg, name) for arg in node.args)
    kwargs = []
    for keyword in node.keywords:
        if keyword.arg is None:  # **mapping
            raise ActionSyntaxError(f"{name}(...): arguments must be written out, not unpacked")
        kwargs.append((keyword.arg, _literal(keyword.value, name)))
    return ActionCall(name, args, tuple(kwargs))


def _literal(node: ast.expr, name: str) -> Any:
    if isinstance(node, ast.Starred):
        raise ActionSyntaxError(f"{name}(...): arguments must be written out, not unpacked")
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ActionSyntaxError(
            f"{name}(...): every argument must be a literal (a quoted string, a number, True/False/None, "
            "or a list of them)"
        ) from exc
    if not _finite(value):
        raise ActionSyntaxError(f"{name}(...): numbers must be finite")
    return value


def _finite(value: Any) -> bool:
    """No inf/nan anywhere in ``value`` (their repr is not a literal)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, complex):
        return math.isfinite(value.real) and math.isfinite(value.imag)
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(key) and _finite(item) for key, item in value.items())
    return True
