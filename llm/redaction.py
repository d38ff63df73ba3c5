"""Redaction of credentials from any text the harness writes (trajectories, results, logs, reports).

Two sources: every value of the environment's credential variables (whatever its shape), and the
common key shapes of the providers litellm supports.
"""

from __future__ import annotations

import os
import re

REDACTED = "<redacted>"
_KEY_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|hf_[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,}|Bearer\s+[A-Za-z0-9._\-]{16,})"
)
_CREDENTIAL_VARIABLE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values (e.g. "1") would redact ordinary text


def credential_values() -> list[str]:
    """Values of this process's credential-like environment variables, longest first."""
    values = {
        value
        for name, value in os.environ.items()
        if _CREDENTIAL_VARIABLE.search(name) and len(value.strip()) >= _MIN_SECRET_LEN
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with credential values and key-shaped strings replaced by ``<redacted>``."""
    for value in credential_values():
        if value in text:
            text = text.replace(value, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)
