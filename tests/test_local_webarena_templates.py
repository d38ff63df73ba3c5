"""Local tasks line up with WebArena template by template: a linked task carries one of WebArena's own
wordings of its intent template (as in test.raw.json) and renders it into its intent; a local-only task is
marked by a template id from 10000; the task set ``local:webarena_template=<id>``, the task listing and the
study report's by-template table all group by that link."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from webarena_gym.envs.local import registry
from webarena_gym.experiments import tasksets
from webarena_gym.experiments.compare import PolicySpec, _result_base, compare
from webarena_gym.experiments.report import build_report, summarize
from webarena_gym.experiments.report.tables import template_table

TASKS = registry.load_tasks()
LINKED = [t for t in TASKS if registry.webarena_template_id(t) is not None]
PLACEHOLDER = re.compile(r"\{\{([^}]+)\}\}")

# This branch's share of WebArena's mix (map 29 templates / 109 tasks, multi-site 11 / 48).
TARGETS = {"map": (18, 54), "multi-site": (7, 23)}


def render(template: str, values: dict) -> str:
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", str(value))
    return template


def test_every_linked_task_uses_webarenas_own_template_text_and_renders_it():
    texts = registry.webarena_templates()
    assert LINKED, "no local task is linked to a WebArena template"
    for task in LINKED:
        template_id = registry.webarena_template_id(task)
        assert template_id in texts, f"task {task['task_id']}: no WebArena template {template_id}"
        assert task["intent_template"] in texts[template_id], task["task_id"]
        assert set(PLACEHOLDER.findall(task["intent_template"])) == set(task["instantiation_dict"]), task["task_id"]
        assert render(task["intent_template"], task["instantiation_dict"]) == task["intent"], task["task_id"]


def test_local_only_tasks_carry_template_ids_from_10000():
    """Every template id is either one of WebArena's (which run up to 6100) or a local-only one from 10000;
    an id in neither set would be a link to a template WebArena does not have."""
    webarena = set(registry.webarena_templates())
    assert max(webarena) < registry.LOCAL_TEMPLATE_BASE
    for task in TASKS:
        template = task["intent_template_id"]
        assert (template >= registry.LOCAL_TEMPLATE_BASE) == (registry.webarena_template_id(task) is None)
        assert template in webarena or template >= registry.LOCAL_TEMPLATE_BASE, task["task_id"]


def test_linked_tasks_use_the_eval_types_webarena_uses_for_their_template():
    real: dict[int, set[str]] = {}
    for t in json.loads(registry.WEBARENA_TASKS.read_text()):
        real.setdefault(t["intent_template_id"], set()).update(t["eval"]["eval_types"])
    for task in LINKED:
        assert set(task["eval"]["eval_types"]) <= real[task["intent_template_id"]], task["task_id"]


def test_map_and_multi_site_reach_their_share_of_webarenas_templates_and_tasks():
    for site, (n_templates, n_tasks) in TARGETS.items():
        mine = [t for t in LINKED if registry.site_group(t) == site]
        assert len({t["intent_template_id"] for t in mine}) >= n_templates and len(mine) >= n_tasks, site


def test_task_set_and_listing_group_by_webarena_template():
    template, count = Counter(registry.webarena_template_id(t) for t in LINKED).most_common(1)[0]
    ids = registry.task_ids(webarena_template=template)
    assert len(ids) == count and ids == [t["task_id"] for t in LINKED if t["intent_template_id"] == template]
    assert [t.task_id for t in tasksets.resolve(f"local:webarena_template={template}")] == ids
    assert [t.task_id for t in tasksets.resolve(f"webarena:webarena_template={template}")] == [
        t.task_id for t in tasksets.resolve(f"webarena:template={template}")
    ]
    listing = subprocess.run(
        [sys.executable, "-m", "webarena_gym.experiments.cli", "tasks", "local"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    marks = {int(line.split("\t")[0].split(".")[-1]): line.split("\t")[3] for line in listing}
    for task in TASKS:
        wanted = registry.webarena_template_id(task)
        assert marks[task["task_id"]] == f"webarena_template={'none' if wanted is None else wanted}"


def test_coverage_table_counts_templates_tasks_and_eval_types_per_site():
    rows = {row["site"]: row for row in registry.coverage()}
    assert rows["all"]["linked_tasks"] == len(LINKED) and rows["all"]["webarena_tasks"] == 812
    assert rows["all"]["linked_tasks"] + rows["all"]["local_only_tasks"] == len(TASKS)
    assert (rows["multi-site"]["webarena_templates"], rows["multi-site"]["webarena_tasks"]) == (11, 48)
    maps = [t for t in LINKED if t["sites"] == ["map"]]
    assert rows["map"]["templates"] == len({t["intent_template_id"] for t in maps})
    assert rows["map"]["eval_types"] == ["program_html", "string_match", "url_match"]
    assert rows["map"]["eval_type_tasks"]["url_match"] == sum("url_match" in t["eval"]["eval_types"] for t in maps)
    table = subprocess.run(
        [sys.executable, "-m", "webarena_gym.experiments.cli", "tasks", "--coverage"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"| map | {rows['map']['templates']} | {rows['map']['linked_tasks']} |" in table


def _outcome(job):
    """Local tasks succeed and real ones fail, so the two columns of a template row must differ."""
    local = job.task.env_id.startswith("webarena/local.")
    return _result_base(job, "done", reward=1.0 if local else 0.0, n_steps=1)


def test_study_report_lines_up_local_and_real_results_per_template(tmp_path: Path):
    template = registry.webarena_template_id(LINKED[0])
    local = [t for t in tasksets.resolve(f"local:webarena_template={template}")]
    real = tasksets.resolve(f"webarena:template={template}")[:2]
    local_only = [t for t in tasksets.local_tasks() if t.webarena_template is None][:1]
    policy = PolicySpec("reference", label="reference")
    study = compare(
        [policy], [*local, *real, *local_only], tmp_path / "s", runner=_outcome, n_workers=1, progress=False
    )
    summary = summarize(study)
    assert [row["template"] for row in summary["by_template"]] == [template]
    row = summary["by_template"][0]
    assert row["intent_template"] == registry.webarena_templates()[template][0]
    assert row["results"]["reference"]["local"] == {"mean": 1.0, "stderr": 0.0, "n_tasks": len(local)}
    assert row["results"]["reference"]["webarena"] == {"mean": 0.0, "stderr": 0.0, "n_tasks": len(real)}
    table = template_table(summary).markdown()
    assert f"| {template} | " in table and f"100.0 ± 0.0 (n={len(local)})" in table
    assert "(webarena)" in table and "(local)" in table
    report = build_report(study)
    assert (report / "by_template.csv").read_text().count("\n") == 2
    assert "Success by WebArena template" in (report / "index.html").read_text()


def test_a_local_study_shows_no_empty_webarena_columns_per_template(tmp_path: Path):
    template = registry.webarena_template_id(LINKED[0])
    local = tasksets.resolve(f"local:webarena_template={template}")
    study = compare(
        [PolicySpec("reference", label="reference")],
        local,
        tmp_path / "s",
        runner=_outcome,
        n_workers=1,
        progress=False,
    )
    table = template_table(summarize(study)).markdown()
    assert "reference (local)" in table and "(webarena)" not in table and "(n=0)" not in table


def test_by_template_groups_only_webarena_and_local_tasks():
    """A WebArena-Lite task counts under its WebArena template; a MiniWoB++ task, whose template ids are its
    own numbering, and a local-only task count under none."""
    from webarena_gym.experiments.report.summary import by_template
    from webarena_gym.experiments.store import EpisodeResult

    linked = LINKED[0]
    template = registry.webarena_template_id(linked)
    local_only = next(t for t in TASKS if registry.webarena_template_id(t) is None)

    def result(env_id: str, template_id: int) -> EpisodeResult:
        return EpisodeResult("p", env_id, 0, "x", template_id, 0, "done", reward=1.0)

    rows = by_template(
        [
            result(f"webarena/local.{linked['task_id']}", template),
            result("webarena-lite/7", template),
            result("miniwob/click-test", template),
            result(f"webarena/local.{local_only['task_id']}", local_only["intent_template_id"]),
        ],
        ["p"],
    )
    assert [row["template"] for row in rows] == [template]
    assert rows[0]["results"]["p"]["local"]["n_tasks"] == 1 and rows[0]["results"]["p"]["webarena"]["n_tasks"] == 1
