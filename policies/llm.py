"""The one LLM client every policy uses: litellm underneath, plus retries, accounting and a replay cache.

Why one client: runs must be comparable across methods, so every call is retried, timed, costed and
recorded the same way (``LLMCall``), and a study can be re-run offline exactly from the on-disk cache.

* Any litellm model string works (``gpt-4-turbo``, ``anthropic/...``, ``openai/<name>`` with ``api_base``
  for local servers). API keys come from the environment as litellm reads them; this module never
  stores or records them.
* Settings are per *call role* (``actor``, ``judge``, ``planner`` ...), see :class:`CallSettings`.
* Transient failures (rate limits, 5xx, timeouts, connection errors) are retried with exponential
  backoff; when the budget is spent, or on a permanent error, :class:`LLMError` is raised and the
  failed call is still recorded (``LLMCall.error``) so the trajectory shows what happened.
* The cache key is (model, messages, settings, sample index), where the sample index counts how many
  samples of that same request were already drawn in this episode: a re-run replays the same
  sequence of answers, even for repeated identical prompts at temperature > 0.
* :class:`Script` is the scripted LLM for tests and offline runs. Its answers go through litellm's own
  ``mock_response`` path, so the real call path (argument handling, response objects, exception
  mapping) runs; token counts are then computed with litellm's tokenizer so accounting stays meaningful.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import (feasibility.md)

Message = dict[str, Any]
ScriptItem = str | BaseException | Callable[[list[Message]], "str | BaseException"]

DEFAULT_MODEL_ENV = "WEBARENA_GYM_MODEL"
DEFAULT_MODEL = "gpt-4-turbo"


def default_model() -> str:
    """The model policies use unless configured: ``$WEBARENA_GYM_MODEL`` or GPT-4-Turbo (the cards' backbone)."""
    return os.environ.get(DEFAULT_MODEL_ENV, DEFAULT_MODEL)


class LLMError(RuntimeError):
    """A call failed for good (permanent error or retries exhausted). ``call`` is the recorded attempt."""

    def __init__(self, message: str, call: LLMCall | None = None):
        super().__init__(message)
        self.call = call
        self.attempts = 0


class ScriptExhaustedError(LLMError):
    """The scripted LLM was asked for more answers than its script holds for that role."""


@dataclass(frozen=True)
class CallSettings:
    """Sampling settings of one call role. ``None`` leaves the provider default."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    n: int = 1
    stop: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # provider options, e.g. {"api_base": ...}

    def merged(self, **overrides: Any) -> CallSettings:
        known = {k: v for k, v in overrides.items() if k in _SETTING_FIELDS}
        extra = {**self.extra, **{k: v for k, v in overrides.items() if k not in _SETTING_FIELDS}}
        if "stop" in known and known["stop"] is not None:
            known["stop"] = tuple(known["stop"])
        return replace(self, **known, extra=extra)

    def request_params(self) -> dict[str, Any]:
        """The sampling parameters sent to litellm (and hashed into the cache key)."""
        params = {k: getattr(self, k) for k in ("temperature", "top_p", "max_tokens") if getattr(self, k) is not None}
        if self.stop:
            params["stop"] = list(self.stop)
        params.update(self.extra)
        return params


_SETTING_FIELDS = {"temperature", "top_p", "max_tokens", "n", "stop"}
# Provider options that carry credentials: sent to litellm, never hashed into cache keys or recorded.
_CREDENTIAL_PARAMS = frozenset(
    {
        "api_key",
        "azure_ad_token",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "extra_headers",
    }
)


@dataclass
class LLMCall:
    """Everything recorded about one logical call (all its samples), as stored in the trajectory."""

    role: str
    model: str
    messages: list[Message]
    responses: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # USD; None when litellm has no price for the model
    latency_s: float = 0.0
    cached: bool = False  # every sample came from the cache (no tokens were paid for now)
    error: str | None = None
    attempts: int = 0
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Completion:
    """What :meth:`LLM.complete` returns: the sample texts and the call record."""

    texts: list[str]
    call: LLMCall

    @property
    def text(self) -> str:
        return self.texts[0]


class Script:
    """Scripted answers per call role, consumed in order.

    An item is a string (the answer), an exception instance (raised through litellm's mock path, e.g.
    ``litellm.RateLimitError(...)``), :data:`Script.TIMEOUT` (litellm's mock timeout: the call waits the
    configured per-call timeout, then times out), or a callable ``messages -> str | exception``.
    """

    TIMEOUT = "<<script:timeout>>"

    def __init__(self, responses: dict[str, Sequence[ScriptItem]]):
        self._queues = {role: list(items) for role, items in responses.items()}
        self._lock = threading.Lock()
        self.used: dict[str, int] = {role: 0 for role in responses}

    def next(self, role: str, messages: list[Message]) -> str | BaseException:
        with self._lock:
            queue = self._queues.get(role)
            if not queue:
                known = ", ".join(sorted(self._queues)) or "none"
                raise ScriptExhaustedError(
                    f"scripted LLM has no answer left for role {role!r} "
                    f"(used {self.used.get(role, 0)}; roles scripted: {known})"
                )
            item = queue.pop(0)
            self.used[role] = self.used.get(role, 0) + 1
        return item(messages) if callable(item) else item

    def remaining(self, role: str) -> int:
        return len(self._queues.get(role, []))


class ResponseCache:
    """On-disk response cache shared safely by several processes (SQLite in WAL mode)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / "llm_cache.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
                "prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, created REAL)"
            )

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> tuple[str, int, int, float | None] | None:
        row = (
            self._conn()
            .execute("SELECT text, prompt_tokens, completion_tokens, cost FROM responses WHERE key=?", (key,))
            .fetchone()
        )
        return None if row is None else (row[0], row[1], row[2], row[3])

    def put(
        self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int, cost: float | None
    ) -> None:
        # First writer wins, so concurrent processes agree on one answer per key.
        self._conn().execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, model, text, prompt_tokens, completion_tokens, cost, time.time()),
        )

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def cache_key(model: str, messages: list[Message], params: dict[str, Any], sample: int, scripted: bool) -> str:
    """Stable hash of a request; scripted answers never collide with real ones."""
    blob = json.dumps(
        {"model": model, "messages": messages, "params": params, "sample": sample, "scripted": scripted},
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _litellm():
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: rate limits, server-side errors, timeouts and dropped connections."""
    litellm = _litellm()
    transient = (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.BadGatewayError,
    )
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def describe_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:500]}"


class LLM:
    """A litellm-backed client with per-role settings; see the module docstring for the guarantees.

    ``retries`` is the number of extra attempts after the first; waits grow as
    ``backoff_s * 2**attempt`` (with jitter) up to ``max_backoff_s``. ``timeout`` is per attempt.
    """

    def __init__(
        self,
        model: str | None = None,
        roles: dict[str, CallSettings] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        retries: int = 4,
        timeout: float = 120.0,
        script: Script | None = None,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
    ):
        self.model = model or default_model()
        self.roles = dict(roles or {})
        self.retries = retries
        self.timeout = float(timeout)
        self.script = script
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self._drawn: dict[str, int] = {}  # request hash -> samples drawn this episode
        self.log: list[LLMCall] | None = None  # when a list, every call (failed ones too) is appended

    def settings(self, role: str) -> CallSettings:
        return self.roles.get(role, CallSettings())

    def begin_episode(self) -> None:
        """Restart the per-request sample counters, so an episode replays from its own first answer."""
        self._drawn.clear()

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable configuration (no credentials), for the trajectory header."""
        return {
            "model": self.model,
            "scripted": self.script is not None,
            "retries": self.retries,
            "timeout": self.timeout,
            "cache": str(self.cache.path) if self.cache is not None else None,
            "roles": {
                r: {
                    **asdict(s),
                    "stop": list(s.stop) if s.stop else None,
                    "extra": {k: v for k, v in s.extra.items() if k not in _CREDENTIAL_PARAMS},
                }
                for r, s in self.roles.items()
            },
        }

    def complete(self, role: str, messages: list[Message], **overrides: Any) -> Completion:
        """Draw ``n`` samples for ``messages`` under ``role``'s settings (``overrides`` win).

        Raises :class:`LLMError` (carrying the recorded ``LLMCall``) when no answer could be obtained.
        """
        settings = self.settings(role).merged(**overrides)
        params = settings.request_params()
        public = {k: v for k, v in params.items() if k not in _CREDENTIAL_PARAMS}
        scripted = self.script is not None
        base = cache_key(self.model, messages, public, -1, scripted)
        first = self._drawn.get(base, 0)
        self._drawn[base] = first + settings.n
        keys = [cache_key(self.model, messages, public, first + i, scripted) for i in range(settings.n)]

        call = LLMCall(
            role=role,
            model=self.model,
            messages=messages,
            responses=[""] * settings.n,
            settings={**public, "n": settings.n},
        )
        if self.log is not None:
            self.log.append(call)
        start = time.perf_counter()
        hits = {
            i: hit for i, key in enumerate(keys) if self.cache is not None and (hit := self.cache.get(key)) is not None
        }
        missing = [i for i in range(settings.n) if i not in hits]
        for i, hit in hits.items():
            call.responses[i] = hit[0]
        paid_cost: float | None = 0.0
        try:
            if missing:
                texts, prompt_tokens, completion_tokens, paid_cost, attempts = self._fetch(
                    role, messages, params, len(missing)
                )
                call.attempts = attempts
                call.prompt_tokens, call.completion_tokens = prompt_tokens, completion_tokens
                for i, text in zip(missing, texts):
                    call.responses[i] = text
                    if self.cache is not None:
                        share = None if paid_cost is None else paid_cost / len(missing)
                        self.cache.put(
                            keys[i], self.model, text, prompt_tokens, completion_tokens // len(missing), share
                        )
            else:  # all cached: show what the call cost when it was made
                call.cached = True
                call.prompt_tokens = hits[0][1]
                call.completion_tokens = sum(h[2] for h in hits.values())
                costs = [h[3] for h in hits.values()]
                paid_cost = None if None in costs else sum(costs)
        except LLMError as exc:
            call.error = str(exc)
            call.attempts = getattr(exc, "attempts", call.attempts)
            call.latency_s = time.perf_counter() - start
            exc.call = call
            raise
        call.cost = paid_cost
        call.latency_s = time.perf_counter() - start
        return Completion(texts=call.responses, call=call)

    # -- the litellm call with retries -------------------------------------------------------------

    def _fetch(
        self, role: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None, int]:
        """Returns (texts, prompt_tokens, completion_tokens, cost, attempts) for ``n`` fresh samples."""
        if self.script is not None:  # one mock call per sample: each sample has its own scripted answer
            texts, prompt, completion, cost, attempts = [], 0, 0, 0.0, 0
            for _ in range(n):
                t, p, c, k, a = self._with_retries(role, messages, params, 1)
                texts += t
                prompt, completion, attempts = p, completion + c, attempts + a
                cost = None if cost is None or k is None else cost + k
            return texts, prompt, completion, cost, attempts
        return self._with_retries(role, messages, params, n)

    def _with_retries(
        self, role: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None, int]:
        last: BaseException | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                wait = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
                time.sleep(wait * (0.5 + random.random() / 2))
            try:
                texts, prompt, completion, cost = self._once(role, messages, params, n)
                return texts, prompt, completion, cost, attempt + 1
            except LLMError:
                raise
            except Exception as exc:  # litellm maps provider errors onto its exception types
                last = exc
                if not is_transient(exc):
                    error = LLMError(f"{self.model} ({role}) failed: {describe_error(exc)}")
                    error.attempts = attempt + 1
                    raise error from exc
        assert last is not None
        error = LLMError(f"{self.model} ({role}) failed after {self.retries + 1} attempts: {describe_error(last)}")
        error.attempts = self.retries + 1
        raise error from last

    def _once(
        self, role: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None]:
        litellm = _litellm()
        kwargs: dict[str, Any] = {**params, "timeout": self.timeout}
        if n > 1:
            kwargs["n"] = n
        if self.script is not None:
            answer = self.script.next(role, messages)
            if answer == Script.TIMEOUT:
                kwargs.update(mock_response="", mock_timeout=True)
            else:
                kwargs["mock_response"] = answer
        response = litellm.completion(model=self.model, messages=messages, **kwargs)
        texts = [(choice.message.content or "") for choice in response.choices]
        if self.script is not None:  # the mock's usage is a constant; count what a real call would
            prompt = _count_tokens(litellm, self.model, messages=messages)
            completion = sum(_count_tokens(litellm, self.model, text=t) for t in texts)
            return texts, prompt, completion, _price(litellm, self.model, prompt, completion)
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        try:
            cost: float | None = float(litellm.completion_cost(completion_response=response))
        except Exception:  # unknown model price: tokens only
            cost = None
        return texts, prompt, completion, cost


def _count_tokens(litellm: Any, model: str, **what: Any) -> int:
    messages = what.get("messages")
    if messages is not None and all(isinstance(m.get("content"), str) for m in messages):
        # Per-message framing once per role sequence + cached content counts: the system prompt and
        # examples repeat every step, so counting stays cheap (same total as litellm's counter).
        framing = _framing_tokens(model, tuple(str(m.get("role")) for m in messages))
        return framing + sum(_text_tokens(model, m["content"]) for m in messages)
    if "text" in what:
        return _text_tokens(model, what["text"])
    try:
        return int(litellm.token_counter(model=model, **what))
    except Exception:
        return max(1, len(json.dumps(messages, default=str)) // 4)


@functools.lru_cache(maxsize=512)
def _text_tokens(model: str, text: str) -> int:
    try:
        return int(_litellm().token_counter(model=model, text=text))
    except Exception:
        return max(1, len(text) // 4)


@functools.lru_cache(maxsize=64)
def _framing_tokens(model: str, roles: tuple[str, ...]) -> int:
    try:
        return int(_litellm().token_counter(model=model, messages=[{"role": r, "content": ""} for r in roles]))
    except Exception:
        return 4 * len(roles) + 3


def _price(litellm: Any, model: str, prompt: int, completion: int) -> float | None:
    try:
        p, c = litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
        return float(p + c)
    except Exception:
        return None
