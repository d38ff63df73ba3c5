"""The episode's network trace: every request of a browser context's pages as HAR 1.2 entries.

WebArena-Verified checks navigate and mutate tasks against the requests the browser sent (URL, method,
form data, status, a few headers), so the env records them while the episode runs and the evaluator
reads them when it ends; the rollout writes them beside the trajectory as ``network.har``.

Playwright's own HAR recorder writes its file only when the context closes, after the env has scored
the episode; this recorder keeps the entries in memory from the context's ``response`` and
``requestfailed`` events instead. Header lists and response bodies are read when :meth:`entries` is
called (a round trip each, not allowed inside an event handler), for the non-static requests only.

Bounds: at most ``max_entries`` entries (later ones are counted, not kept), request and response
bodies cut at ``max_body_chars``, response bodies kept only for JSON responses. Scrubbing: the values
of ``Cookie``/``Set-Cookie``/``Authorization`` headers and of form or JSON fields named like a password
or token are replaced, except the cookies named in ``keep_cookies`` (site preferences some checks read);
the written file also goes through the project's credential redaction.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

import playwright.sync_api

logger = logging.getLogger(__name__)

DEFAULT_MAX_ENTRIES = 5_000  # a long WebArena episode sends a few hundred non-static requests
DEFAULT_MAX_BODY_CHARS = 65_536
# WebArena-Verified's map checks read the directions engine a route used from this preference cookie.
DEFAULT_KEEP_COOKIES = ("_osm_directions_engine",)
SCRUBBED = "<scrubbed>"
_SECRET_HEADERS = ("authorization", "proxy-authorization", "x-csrf-token", "x-m2-admin-auto-login")
_SECRET_FIELD = re.compile(r"pass|token|secret|form_key|authenticity|csrf|session", re.IGNORECASE)
_STATIC = (".css", ".js", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".woff", ".woff2", ".ttf", ".ico", ".webp")


def _is_static(url: str) -> bool:
    return url.split("?", 1)[0].split("#", 1)[0].lower().endswith(_STATIC)


@dataclass
class _Record:
    request: playwright.sync_api.Request
    response: playwright.sync_api.Response | None
    failure: str | None = None


class NetworkRecorder:
    """Collects one context's requests; :meth:`entries` gives them as scrubbed HAR 1.2 entries."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_body_chars: int = DEFAULT_MAX_BODY_CHARS,
        keep_cookies: tuple[str, ...] = DEFAULT_KEEP_COOKIES,
    ) -> None:
        self.max_entries = max_entries
        self.max_body_chars = max_body_chars
        self.keep_cookies = keep_cookies
        self._records: list[_Record] = []
        self._dropped = 0
        self._cache: dict[int, dict] = {}

    def attach(self, context: playwright.sync_api.BrowserContext) -> None:
        """Record the requests of ``context`` too (an episode's restore may open a new one)."""
        context.on("response", lambda response: self._add(_Record(response.request, response)))
        context.on("requestfailed", lambda request: self._add(_Record(request, None, request.failure or "failed")))

    def _add(self, record: _Record) -> None:
        if len(self._records) >= self.max_entries:
            self._dropped += 1
            return
        self._records.append(record)

    @property
    def dropped(self) -> int:
        """Requests not kept because the trace reached ``max_entries``."""
        return self._dropped

    def entries(self) -> list[dict[str, Any]]:
        """The requests so far, oldest first, as HAR 1.2 entries (scrubbed)."""
        out = []
        for index, record in enumerate(self._records):
            if index not in self._cache:
                self._cache[index] = self._entry(record)
            out.append(self._cache[index])
        return out

    def har(self) -> dict[str, Any]:
        """The whole trace as a HAR 1.2 document."""
        log: dict[str, Any] = {
            "version": "1.2",
            "creator": {"name": "webarena-gym", "version": "1"},
            "pages": [],
            "entries": self.entries(),
        }
        if self._dropped:
            log["comment"] = f"{self._dropped} later requests not kept (max_entries={self.max_entries})"
        return {"log": log}

    # -- one entry -----------------------------------------------------------------------------------

    def _headers(self, message: Any, full: bool) -> dict[str, str]:
        if full:
            try:
                return dict(message.all_headers())
            except playwright.sync_api.Error as exc:  # its page or context is gone: the headers it kept
                logger.debug("all_headers failed: %s", exc)
        return dict(message.headers)

    def _header_list(self, headers: dict[str, str]) -> list[dict[str, str]]:
        out = []
        for name, value in headers.items():
            lower = name.lower()
            if lower in ("cookie", "set-cookie"):
                value = self._scrub_cookies(value, lower)
            elif lower.startswith(_SECRET_HEADERS):
                value = SCRUBBED
            out.append({"name": name, "value": value})
        return out

    def _scrub_cookies(self, value: str, header: str) -> str:
        if header == "set-cookie":  # one cookie per line: name=value; attributes
            lines = []
            for line in value.split("\n"):
                name, _, rest = line.partition("=")
                cookie_value, sep, attributes = rest.partition(";")
                kept = cookie_value if name.strip() in self.keep_cookies else SCRUBBED
                lines.append(f"{name}={kept}{sep}{attributes}")
            return "\n".join(lines)
        pairs = []
        for part in value.split(";"):
            name, sep, cookie_value = part.strip().partition("=")
            pairs.append(f"{name}{sep}{cookie_value if name in self.keep_cookies else SCRUBBED}")
        return "; ".join(pairs)

    def _cookies(self, headers: dict[str, str]) -> list[dict[str, str]]:
        cookies = []
        for name, value in headers.items():
            if name.lower() == "set-cookie":
                for line in self._scrub_cookies(value, "set-cookie").split("\n"):
                    cookie_name, _, rest = line.partition("=")
                    cookies.append({"name": cookie_name.strip(), "value": rest.partition(";")[0]})
        return cookies

    def _body(self, text: str, mime_type: str) -> str:
        """``text`` with secret-named fields scrubbed (form or JSON bodies), cut at ``max_body_chars``."""
        if "application/x-www-form-urlencoded" in mime_type:
            pairs = parse_qsl(text, keep_blank_values=True)
            text = urlencode([(k, SCRUBBED if _SECRET_FIELD.search(k) else v) for k, v in pairs])
        elif "json" in mime_type:
            try:
                text = json.dumps(_scrub_json(json.loads(text)), ensure_ascii=False)
            except ValueError:
                pass
        return text[: self.max_body_chars]

    def _entry(self, record: _Record) -> dict[str, Any]:
        request, response = record.request, record.response
        full = not _is_static(request.url)
        request_headers = self._headers(request, full)
        entry: dict[str, Any] = {
            "startedDateTime": "",
            "time": -1,
            "request": {
                "method": request.method,
                "url": request.url,
                "httpVersion": "HTTP/1.1",
                "headers": self._header_list(request_headers),
                "queryString": [],
                "cookies": [],
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {"send": -1, "wait": -1, "receive": -1},
        }
        post = request.post_data
        if post is not None:
            mime = next((v for k, v in request_headers.items() if k.lower() == "content-type"), "")
            entry["request"]["postData"] = {"mimeType": mime, "text": self._body(post, mime)}
        if response is None:
            entry["response"] = _response(0, "", [], [], {"size": 0, "mimeType": ""}, "")
            entry["comment"] = f"request failed: {record.failure}"
            return entry
        response_headers = self._headers(response, full)
        mime = next((v for k, v in response_headers.items() if k.lower() == "content-type"), "")
        content: dict[str, Any] = {"size": -1, "mimeType": mime}
        if full and "json" in mime:
            try:
                content["text"] = self._body(response.text(), mime)
            except (playwright.sync_api.Error, UnicodeDecodeError) as exc:  # evicted by a navigation, or binary
                content["comment"] = f"body not available: {type(exc).__name__}"
        location = next((v for k, v in response_headers.items() if k.lower() == "location"), "")
        entry["response"] = _response(
            response.status,
            response.status_text,
            self._header_list(response_headers),
            self._cookies(response_headers),
            content,
            location,
        )
        return entry


def _response(
    status: int, status_text: str, headers: list, cookies: list, content: dict, redirect: str
) -> dict[str, Any]:
    return {
        "status": status,
        "statusText": status_text,
        "httpVersion": "HTTP/1.1",
        "headers": headers,
        "cookies": cookies,
        "content": content,
        "redirectURL": redirect,
        "headersSize": -1,
        "bodySize": -1,
    }


def _scrub_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: SCRUBBED if _SECRET_FIELD.search(str(k)) else _scrub_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_json(v) for v in value]
    return value
