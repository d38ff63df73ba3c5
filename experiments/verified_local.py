"""The network checks of the local suite's mutating tasks in WebArena-Verified form, read from the traces of
a study of the reference solutions (``--record-network``), and stored in ``envs/local/verified/<site>.json``.

What a mutation sends to a local site (its route, its form fields) is a fact of the local sites, not of
the task's WebArena eval, so it is recorded once from the reference replays rather than derived. Per task,
one ``NetworkEventEvaluator`` per distinct route the reference posted to (its last request there):

* ``url`` the route (site base URLs put back as ``__SITE__`` placeholders), ``http_method`` and the
  response's status (a local form answers with a redirect);
* ``post_data`` the fields WebArena's eval or the intent names: a value among the ``program_html``
  required contents or the intent's words (a review's nickname, a product's new status), every field of
  a form of at most two (a vote, a wishlist button). Free text the task leaves open (a review's body),
  scrubbed fields and fields holding a site's address (its port differs per run) are left out.

A task whose reference sends no form (a drafted message, a map route) is checked on the last page its
reference opened. Run: ``python -m webarena_gym.experiments.verified_local STUDY`` (it rewrites the
``network`` entries of the tasks the study holds and keeps every other stored value).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from webarena_gym.envs.local import registry
from webarena_gym.envs.local.reference import PLACEHOLDERS
from webarena_gym.envs.local.verified import STORED_DIR
from webarena_gym.experiments.store import StudyStore
from webarena_gym.experiments.trajectory import NETWORK_FILE

_SCRUBBED = "<scrubbed>"
_SMALL_FORM = 2
_IGNORED_PATHS = ("/login", "/account/login", "/users/sign_in", "/admin/auth")


def _placeheld(url: str, site_urls: dict[str, str]) -> str:
    by_site = {site: placeholder for placeholder, site in PLACEHOLDERS.items()}
    for site, base in sorted(site_urls.items(), key=lambda kv: -len(kv[1])):
        if site in by_site and url.startswith(base.rstrip("/")):
            return by_site[site] + url[len(base.rstrip("/")) :]
    return url


def _named_values(task: dict[str, Any]) -> list[str]:
    """The values WebArena's eval of ``task`` checks in its pages (lower-cased)."""
    out: list[str] = []
    for target in task["eval"].get("program_html") or []:
        for value in (target.get("required_contents") or {}).values():
            out.extend(str(v).lower() for v in (value if isinstance(value, list) else [value]))
    return [v for v in out if v]


def _form_fields(text: str) -> dict[str, Any]:
    """A urlencoded body's fields; a field sent several times (the rows ticked in a grid) as a list."""
    out: dict[str, Any] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        out[key] = [*out[key], value] if isinstance(out.get(key), list) else [out[key], value] if key in out else value
    return out


def _named(value: Any, named: list[str], intent: str) -> bool:
    if isinstance(value, list):
        return any(_named(v, named, intent) for v in value)
    return value.lower() in named or (len(value) > 1 and value.lower() in intent)


def _holds_address(value: Any, site_urls: dict[str, str]) -> bool:
    """Whether a field's value holds a site's address, which differs from one run to the next."""
    values = value if isinstance(value, list) else [value]
    return any(base.rstrip("/") in v for v in values for base in site_urls.values() if base)


def _kept_fields(task: dict[str, Any], fields: dict[str, Any], site_urls: dict[str, str]) -> dict[str, Any]:
    fields = {k: v for k, v in fields.items() if v and v != _SCRUBBED and not _holds_address(v, site_urls)}
    if len(fields) <= _SMALL_FORM:
        return fields
    named, intent = _named_values(task), task["intent"].lower()
    return {k: v for k, v in fields.items() if _named(v, named, intent)}


def mutation_checks(task: dict[str, Any], entries: Sequence[dict], site_urls: dict[str, str]) -> list[dict[str, Any]]:
    """The ``NetworkEventEvaluator`` configs of ``task`` from its reference episode's HAR ``entries``."""
    posts: dict[str, dict] = {}
    for entry in entries:
        request = entry["request"]
        if request["method"] == "GET" or any(p in request["url"] for p in _IGNORED_PATHS):
            continue
        posts[request["url"].split("?", 1)[0]] = entry
    checks = []
    for url, entry in posts.items():
        text = (entry["request"].get("postData") or {}).get("text") or ""
        expected: dict[str, Any] = {"url": _placeheld(url, site_urls), "http_method": entry["request"]["method"]}
        expected["response_status"] = entry["response"]["status"]  # the package expects 200 unless told
        fields = _kept_fields(task, _form_fields(text), site_urls)
        if fields:
            expected["post_data"] = fields
        checks.append({"evaluator": "NetworkEventEvaluator", "expected": expected})
    if checks:
        return checks
    pages = [e["request"]["url"] for e in entries if e["request"]["method"] == "GET" and _is_document(e)]
    if not pages:
        return []
    return [{"evaluator": "NetworkEventEvaluator", "expected": {"url": _placeheld(pages[-1], site_urls)}}]


def _is_document(entry: dict) -> bool:
    headers = {h["name"].lower(): h["value"] for h in entry["request"].get("headers") or []}
    return "text/html" in headers.get("accept", "")


def record(study: str | Path) -> list[Path]:
    """Store the network checks of every mutating task the reference solved in ``study``; returns the
    files written."""
    root = Path(study)
    found: dict[int, list[dict[str, Any]]] = {}
    for result in StudyStore(root).latest().values():
        if result.policy.split(" ")[0] != "reference" or result.reward != 1.0 or not result.trajectory:
            continue
        folder = root / result.trajectory
        traj = json.loads((folder / "trajectory.json").read_text(encoding="utf-8"))
        task = registry.get_task(int(result.env_id.rsplit(".", 1)[1]))
        entries = json.loads((folder / NETWORK_FILE).read_text(encoding="utf-8"))["log"]["entries"]
        checks = mutation_checks(task, entries, dict(traj["reset_info"]["site_urls"]))
        if checks and "program_html" in task["eval"]["eval_types"]:
            found[task["task_id"]] = checks
    written = []
    for path in sorted(registry.TASKS_DIR.glob("*.json")):
        ids = {t["task_id"] for t in json.loads(path.read_text(encoding="utf-8"))} & set(found)
        if not ids:
            continue
        out = STORED_DIR / path.name
        stored = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        for task_id in ids:
            stored[str(task_id)] = {**stored.get(str(task_id), {}), "network": found[task_id]}
        text = json.dumps(dict(sorted(stored.items(), key=lambda kv: int(kv[0]))), indent=1, ensure_ascii=False)
        out.write_text(text + "\n", encoding="utf-8")
        written.append(out)
    return written


if __name__ == "__main__":
    for written_path in record(sys.argv[1]):
        print(written_path.name)
