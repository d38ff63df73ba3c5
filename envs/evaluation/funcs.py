"""The ``func:`` helpers that WebArena task configs call, and the registry the local suite extends.

Task configs name helpers as text, e.g. ``func:reddit_get_post_url('__last_url__')`` or
``func:gitlab_get_project_memeber_role(__page__, 'byteblaze')``. The text is parsed by a small
grammar (a name plus literal string/number arguments and the placeholders ``__page__`` and
``__last_url__``) and dispatched through :data:`EVAL_FUNCS`; nothing is ever ``eval``'d.

A registered helper is called as ``fn(ctx, *args)``: ``ctx`` (:class:`EvalContext`) carries the page
the target is read from, the site base URLs and the agent's final URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

EvalFunc = Callable[..., Any]

EVAL_FUNCS: dict[str, EvalFunc] = {}

# WebArena's Magento administrator (env_config.ACCOUNTS["shopping_site_admin"]); its REST token
# gives the helpers read access to orders and reviews.
SHOPPING_ADMIN_ACCOUNT = {"username": "admin", "password": "admin1234"}

PAGE_PLACEHOLDER = "__page__"
LAST_URL_PLACEHOLDER = "__last_url__"


class EvalFuncError(ValueError):
    """A ``func:`` string that does not parse, names an unknown helper, or whose helper failed."""


@dataclass
class EvalContext:
    """What a helper may use: the page it reads, site base URLs (no trailing slash), the final URL."""

    page: Any
    urls: dict[str, str]
    last_url: str
    accounts: dict[str, dict[str, str]] = field(
        default_factory=lambda: {"shopping_admin": dict(SHOPPING_ADMIN_ACCOUNT)}
    )
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # e.g. the admin token, per evaluation

    def site_url(self, site: str) -> str:
        try:
            return self.urls[site].rstrip("/")
        except KeyError:
            raise EvalFuncError(f"helper needs the {site!r} site URL, which this run does not serve") from None


def register_eval_func(name: str) -> Callable[[EvalFunc], EvalFunc]:
    """Register ``fn`` under ``name`` for ``func:name(...)``; a later registration replaces an earlier one."""

    def decorator(fn: EvalFunc) -> EvalFunc:
        EVAL_FUNCS[name] = fn
        return fn

    return decorator


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placeholder:
    """A bare ``__page__`` / ``__last_url__`` argument."""

    name: str


@dataclass(frozen=True)
class FuncCall:
    """A parsed ``func:`` string. String arguments may contain ``__last_url__``, filled at call time."""

    name: str
    args: tuple[str | int | float | Placeholder, ...]

    def run(self, ctx: EvalContext) -> Any:
        fn = EVAL_FUNCS.get(self.name)
        if fn is None:
            raise EvalFuncError(f"unknown eval func {self.name!r} (registered: {sorted(EVAL_FUNCS)})")
        return fn(ctx, *(_bind(arg, ctx) for arg in self.args))


def _bind(arg: str | int | float | Placeholder, ctx: EvalContext) -> Any:
    if isinstance(arg, Placeholder):
        return ctx.page if arg.name == PAGE_PLACEHOLDER else ctx.last_url
    if isinstance(arg, str):
        return arg.replace(LAST_URL_PLACEHOLDER, ctx.last_url)
    return arg


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<num>[-+]?\d+(?:\.\d+)?)
      | (?P<placeholder>__page__|__last_url__)
      | (?P<punct>[(),])
    )""",
    re.VERBOSE,
)
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), literal[1:-1])


def is_func(text: str) -> bool:
    return text.startswith("func:")


def parse_func(text: str) -> FuncCall:
    """Parse ``func:name(arg, ...)``; raise :class:`EvalFuncError` with the position on bad input."""
    if not is_func(text):
        raise EvalFuncError(f"not a func: string: {text!r}")
    body = text[len("func:") :]
    match = _NAME.match(body)
    if not match:
        raise EvalFuncError(f"missing function name in {text!r}")
    name, pos = match.group(1), match.end()
    args: list[str | int | float | Placeholder] = []
    tokens: list[tuple[str, str]] = []
    while pos < len(body):
        if not body[pos:].strip():
            break
        token = _TOKEN.match(body, pos)
        if not token:
            raise EvalFuncError(f"unexpected text at position {pos} in {text!r}")
        kind = token.lastgroup or ""
        tokens.append((kind, token.group(kind)))
        pos = token.end()
    if len(tokens) < 2 or tokens[0] != ("punct", "(") or tokens[-1] != ("punct", ")"):
        raise EvalFuncError(f"expected name(args) in {text!r}")
    inner = tokens[1:-1]
    for i, (kind, value) in enumerate(inner):
        expect_arg = i % 2 == 0
        if expect_arg and kind == "punct" or not expect_arg and value != ",":
            raise EvalFuncError(f"malformed argument list in {text!r}")
        if kind == "str":
            args.append(_unquote(value))
        elif kind == "num":
            args.append(float(value) if "." in value else int(value))
        elif kind == "placeholder":
            args.append(Placeholder(value))
    if inner and inner[-1][0] == "punct":
        raise EvalFuncError(f"trailing comma in {text!r}")
    return FuncCall(name, tuple(args))


# ---------------------------------------------------------------------------------------------
# WebArena's helpers, against the real sites
# ---------------------------------------------------------------------------------------------


def _request_json(ctx: EvalContext, method: str, url: str, **kwargs: Any) -> Any:
    """HTTP through the browser context (same proxy, headers and cookies as the agent)."""
    response = ctx.page.context.request.fetch(url, method=method, **kwargs)
    if not response.ok:
        raise EvalFuncError(f"{method} {url} returned HTTP {response.status}")
    return response.json()


def _shopping_admin_headers(ctx: EvalContext) -> dict[str, str]:
    """Headers with a Magento admin bearer token, fetched once per evaluation."""
    if "admin_headers" in ctx.cache:
        return ctx.cache["admin_headers"]
    token = _request_json(
        ctx,
        "POST",
        f"{ctx.site_url('shopping')}/rest/default/V1/integration/admin/token",
        headers={"Content-Type": "application/json"},
        data=json.dumps(ctx.accounts["shopping_admin"]),
    )
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    ctx.cache["admin_headers"] = headers
    return headers


def _sku_reviews(ctx: EvalContext, sku: str) -> list[dict[str, Any]]:
    url = f"{ctx.site_url('shopping')}/rest/V1/products/{sku}/reviews"
    return list(_request_json(ctx, "GET", url, headers=_shopping_admin_headers(ctx)))


@register_eval_func("shopping_get_latest_order_url")
def shopping_get_latest_order_url(ctx: EvalContext) -> str:
    """The customer-facing page of the most recently created order (Magento REST, admin token)."""
    params = {
        "searchCriteria[sortOrders][0][field]": "created_at",
        "searchCriteria[sortOrders][0][direction]": "DESC",
        "searchCriteria[pageSize]": "1",
    }
    base = ctx.site_url("shopping")
    orders = _request_json(ctx, "GET", f"{base}/rest/V1/orders", params=params, headers=_shopping_admin_headers(ctx))
    items = orders.get("items") or []
    if not items:
        raise EvalFuncError("the shop has no orders")
    return f"{base}/sales/order/view/order_id/{int(items[0]['increment_id'])}/"


@register_eval_func("shopping_get_sku_latest_review_author")
def shopping_get_sku_latest_review_author(ctx: EvalContext, sku: str) -> str:
    """Nickname on the newest review of ``sku`` ("" when it has none)."""
    reviews = _sku_reviews(ctx, sku)
    return str(reviews[-1]["nickname"]) if reviews else ""


@register_eval_func("shopping_get_sku_latest_review_rating")
def shopping_get_sku_latest_review_rating(ctx: EvalContext, sku: str) -> str:
    """Percent value of the "Rating" vote on the newest review of ``sku`` ("" when it has none)."""
    reviews = _sku_reviews(ctx, sku)
    if not reviews:
        return ""
    ratings = reviews[-1].get("ratings") or []
    if not ratings or ratings[0].get("rating_name") != "Rating":
        raise EvalFuncError(f"newest review of {sku} has no 'Rating' vote")
    return str(ratings[0]["percent"])


@register_eval_func("reddit_get_post_url")
def reddit_get_post_url(ctx: EvalContext, url: str) -> str:
    """Canonical post URL ``scheme://host/f/<forum>/<id>/`` for a post or comment URL; others as given."""
    parsed = urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


# Finds the row whose account sub-label is "@<name>" in GitLab's project members table and returns
# that row's max-role text (WebArena reads the same two columns by index).
_GITLAB_ROLE_JS = """(name) => {
  const accounts = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
  const index = accounts.findIndex((el) => el.outerText === '@' + name);
  const roles = document.querySelectorAll("td.col-max-role span");
  return index >= 0 && index < roles.length ? roles[index].outerText : "";
}"""


@register_eval_func("gitlab_get_project_memeber_role")  # (sic) WebArena's spelling, used by the configs
def gitlab_get_project_member_role(ctx: EvalContext, page: Any, account_name: str) -> str:
    """Role of ``account_name`` on the project members page ``page`` shows ("" when not listed)."""
    try:
        return str(page.evaluate(_GITLAB_ROLE_JS, account_name) or "")
    except Exception:  # the page is not a members page: WebArena scores it as an empty selection
        return ""
