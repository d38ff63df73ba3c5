"""The scripted LLM for tests and offline runs: answers per call role, played through litellm.

Its answers reach the caller through litellm's own ``mock_response`` path, so the real call path
(argument handling, response objects, exception mapping) runs; only the provider is replaced.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from webarena_gym.llm.errors import ScriptExhaustedError
from webarena_gym.llm.messages import Message

ScriptItem = str | BaseException | Callable[[list[Message]], "str | BaseException"]


class _Forever:
    """A role's script that answers every call with the same item (see :meth:`Script.forever`)."""

    def __init__(self, item: ScriptItem) -> None:
        self.item = item


class Script:
    """Scripted answers per call role, consumed in order.

    An item is a string (the answer), an exception instance (raised through litellm's mock path, e.g.
    ``litellm.RateLimitError(...)``), :data:`Script.TIMEOUT` (litellm's mock timeout: the call waits the
    configured per-call timeout, then times out), or a callable ``messages -> str | exception``.
    ``Script({"judge": Script.forever("correct")})`` answers every call of a role alike.
    """

    TIMEOUT = "<<script:timeout>>"

    def __init__(self, responses: Mapping[str, Sequence[ScriptItem] | _Forever]) -> None:
        self._queues: dict[str, list[ScriptItem] | _Forever] = {
            role: items if isinstance(items, _Forever) else list(items) for role, items in responses.items()
        }
        self._lock = threading.Lock()
        self.used: dict[str, int] = {role: 0 for role in responses}

    @staticmethod
    def forever(item: ScriptItem) -> _Forever:
        return _Forever(item)

    def next(self, role: str, messages: list[Message]) -> str | BaseException:
        with self._lock:
            queue = self._queues.get(role)
            if isinstance(queue, _Forever):
                item: Any = queue.item
            elif not queue:
                known = ", ".join(sorted(self._queues)) or "none"
                raise ScriptExhaustedError(
                    f"scripted LLM has no answer left for role {role!r} "
                    f"(used {self.used.get(role, 0)}; roles scripted: {known})"
                )
            else:
                item = queue.pop(0)
            self.used[role] = self.used.get(role, 0) + 1
        return item(messages) if callable(item) else item

    def remaining(self, role: str) -> int:
        queue = self._queues.get(role, [])
        return -1 if isinstance(queue, _Forever) else len(queue)
