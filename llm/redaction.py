"""Redaction of credentials from every text the harness writes (trajectories, results, reports, logs).

Two sources: every value of the environment's credential variables (whatever its shape), and the
common key shapes of the providers litellm supports (for keys that reach a message without being in
the environment, e.g. an ``api_key`` option echoed by a provider's error).

Writers go through :func:`redacted_json` (JSON files) or :func:`redact` (text files), and
:func:`install_log_redaction` covers log records, so no writer has to remember which fields might
hold a provider's error message.
"""

from __future__ import annotations

import json
import logging
import os
import re
import traceback
from typing import Any

from webarena_gym.llm.files import write_atomic

REDACTED = "<redacted>"
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}"
    r"|hf_[A-Za-z0-9]{12,}|gsk_[A-Za-z0-9]{12,}|xai-[A-Za-z0-9]{12,}|r8_[A-Za-z0-9]{12,}|pplx-[A-Za-z0-9]{12,}"
    r"|nvapi-[A-Za-z0-9_\-]{12,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|Bearer\s+[A-Za-z0-9._~+/\-]{16,}=*)"
)
# A password (or token) in a URL: ``scheme://user:pass@host`` keeps its scheme and host; so does a token
# standing alone as the user (20+ characters). A plain user name is no secret and is kept: ``ssh://git@host``
# is the clone command a task asks for, and redacting it would change the recorded answer.
_URL_USERINFO = re.compile(r"(?<=://)(?:[^\s/?#@'\"<>:]*:[^\s/?#@'\"<>]*|[A-Za-z0-9_.~\-]{20,})@")
# Keys without a shape of their own (Azure OpenAI's 32 hex digits) where a header or option names them.
_NAMED_KEY = re.compile(r"(?i)(api[-_]?key[\"']?\s*[:=]\s*[\"']?)([0-9a-f]{32})(?![0-9A-Za-z])")
_CREDENTIAL_VARIABLE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
# Values this short are not secrets worth the damage of redacting them everywhere ("1", "true", "dummy").
_MIN_SECRET_LEN = 6
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def credential_values() -> list[str]:
    """Values of this process's credential-like environment variables, longest first."""
    values = {
        value.strip()
        for name, value in os.environ.items()
        if _CREDENTIAL_VARIABLE.search(name) and len(value.strip()) >= _MIN_SECRET_LEN
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with credential values (also in their JSON-escaped form), URL passwords, named keys and
    key-shaped strings replaced by ``<redacted>``."""
    for value in credential_values():
        for form in {value, json.dumps(value, ensure_ascii=False)[1:-1]}:
            if form in text:
                text = text.replace(form, REDACTED)
    text = _URL_USERINFO.sub(REDACTED + "@", text)
    text = _NAMED_KEY.sub(lambda m: m.group(1) + REDACTED, text)
    return _KEY_SHAPES.sub(REDACTED, text)


def escape_surrogates(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (which no UTF-8 file or SQLite text can hold, yet a
    model's JSON reply may carry) written as its ``\\uXXXX`` escape."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def redacted_json(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)``, redacted and safe to write as UTF-8.

    A lone surrogate can only sit inside a JSON string, where ``\\uXXXX`` is its own escape: the text
    loads back to the very same string.
    """
    return redact(escape_surrogates(json.dumps(value, ensure_ascii=False, **kwargs)))


def write_text(path: Any, text: str) -> None:
    """Write ``text`` redacted, as UTF-8, with any lone surrogate escaped, atomically (:mod:`llm.files`)."""
    write_atomic(path, redact(escape_surrogates(text)))


def install_log_redaction() -> None:
    """Redact every log record of this process (message, arguments, traceback) as it is created.

    Idempotent. Warnings are routed through logging so they are redacted too.
    """
    factory = logging.getLogRecordFactory()
    if getattr(factory, "_redacting", False):
        return

    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            record.msg, record.args = redact(escape_surrogates(record.getMessage())), ()
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is logged as it is
            pass
        return record

    make_record._redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make_record)
    logging.captureWarnings(True)
