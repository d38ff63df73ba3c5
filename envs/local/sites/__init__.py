"""Site registry: WebArena site name -> module in this package, imported lazily.

A site may be a module (``map.py``) or a package (``shopping/``). One whose module is missing, or
that has no ``create_app`` yet, is simply not available; callers ask :func:`available_sites` instead
of assuming all seven exist.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

logger = logging.getLogger(__name__)

# WebArena's site names, in the order the homepage lists them.
SITE_NAMES: tuple[str, ...] = (
    "shopping",
    "shopping_admin",
    "reddit",
    "gitlab",
    "wikipedia",
    "map",
    "homepage",
)


class UnknownSiteError(KeyError):
    """A site name that is not one of WebArena's or whose module is not available."""


def load_site(name: str) -> ModuleType:
    """Import ``envs.local.sites.<name>``; raises :class:`UnknownSiteError` with the reason."""
    if name not in SITE_NAMES:
        raise UnknownSiteError(f"unknown local site {name!r}; known: {', '.join(SITE_NAMES)}")
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{name}":
            raise UnknownSiteError(f"local site {name!r} is not implemented yet") from exc
        raise
    if not hasattr(module, "create_app"):
        raise UnknownSiteError(f"local site {name!r} is not implemented yet (no create_app)")
    return module


def available_sites() -> list[str]:
    """Site names whose module imports, in :data:`SITE_NAMES` order.

    A site that fails to import is left out with a warning, so one broken site does not take the
    others down; asking for it by name (:func:`load_site`) still raises the real error.
    """
    names = []
    for name in SITE_NAMES:
        try:
            load_site(name)
        except UnknownSiteError:
            continue
        except Exception as exc:  # noqa: BLE001 - reported, the other sites stay usable
            logger.warning("local site %s is unavailable: %s: %s", name, type(exc).__name__, exc)
            continue
        names.append(name)
    return names
