"""The synthetic-data pipeline without a browser: the teacher's parsers and their checks, the stores,
the evaluation exclusion and splits, re-asks through litellm's real call path, and a killed run that
resumes without duplicates."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synth_support import TeacherServer, grounded, pair, teacher_script, trajectory_fixture

from webarena_gym.experiments.synth import schemas
from webarena_gym.experiments.synth.context import SynthConfig
from webarena_gym.experiments.synth.parsing import (
    parse_classification,
    parse_cot_action,
    parse_feasibility,
    parse_grounded,
    parse_pairs,
    parse_queries,
    parse_targeted,
    render_plan,
)
from webarena_gym.experiments.synth.pipeline import run
from webarena_gym.experiments.synth.splits import Exclusion, SeedLeakError, seed_tasks, split, task_config
from webarena_gym.experiments.synth.store import JsonlStore
from webarena_gym.experiments.synth.teacher import ParseError, Teacher, TeacherGaveUp
from webarena_gym.experiments.synth.training import export_training
from webarena_gym.llm import Script

REPO = Path(__file__).resolve().parent.parent


# -- parsers ---------------------------------------------------------------------------------------------


def test_grounded_plans_must_cover_every_action_once_consecutively_in_order():
    steps = parse_grounded(grounded([[0, 1], [2], [3, 4, 5]]), 0, 5)
    assert [s.actions for s in steps] == [(0, 1), (2,), (3, 4, 5)]
    assert render_plan(steps).startswith("## Step 1\nReasoning: why 1\nStep: do part 1\n## Step 2")
    assert "Description" not in render_plan(steps)
    assert [s.actions for s in parse_grounded(grounded([[3], [4, 5]]), 3, 5)] == [(3,), (4, 5)]  # a replan's range
    assert parse_grounded(grounded([[0, 1]]).replace("[0, 1]", "0-1"), 0, 1)[0].actions == (0, 1)
    for groups, first, last, message in (
        ([[0, 3, 4], [1, 2]], 0, 4, "not consecutive"),  # the paper's forbidden split
        ([[0, 1], [3]], 0, 3, "actions [2] are in no step"),
        ([[0, 1], [1, 2]], 0, 2, "in more than one step"),
        ([[0], [1, 2]], 0, 1, "do not exist"),
        ([[2], [0, 1]], 0, 2, "out of order"),
        ([[0], [1]], 1, 1, "do not exist"),
    ):
        with pytest.raises(ParseError, match=re.escape(message)):
            parse_grounded(grounded(groups), first, last)
    with pytest.raises(ParseError, match="Reasoning:, Description:, Step: and Actions:"):
        parse_grounded("## Step 1\nReasoning: r\nStep: s\nActions: [0]", 0, 0)
    with pytest.raises(ParseError, match="numbered"):
        parse_grounded(grounded([[0]]).replace("## Step 1", "## Step 2"), 0, 0)


def test_query_feasibility_classification_and_cot_formats():
    blocks = "".join(
        f"[Start Task {i}]\nTask: task {i}\nInitial HTML State from Example Index: {i}\n[End Task {i}]\n"
        for i in (1, 2)
    )
    assert parse_queries(blocks, 2, 2) == [("task 1", 1), ("task 2", 2)]
    with pytest.raises(ParseError, match="numbered 1 to 3"):
        parse_queries(blocks, 3, 2)
    with pytest.raises(ParseError, match="examples are numbered 1 to 1"):
        parse_queries(blocks, 2, 1)
    verdicts = "## Task 1\nVerdict: FEASIBLE\nReason: fine\n\n## Task 2\nVerdict: **INFEASIBLE** (no such page)\n"
    assert parse_feasibility(verdicts, 2) == [(True, "fine"), (False, "")]
    with pytest.raises(ParseError, match=r"tasks \[3\]"):
        parse_feasibility(verdicts, 3)
    assert parse_classification("## Reasoning\nrepost\n## Classification\nClass A: reposting", ("A", "Other")) == (
        "A",
        "repost",
    )
    assert parse_classification("## Reasoning\nr\n## Classification\nOther", ("A", "B", "Other"))[0] == "Other"
    with pytest.raises(ParseError, match="Class A, Other"):
        parse_classification("## Reasoning\nr\n## Classification\nClass C", ("A", "Other"))
    action = '# Element: the Forums link\ndo(action="Click", element="7")'
    assert parse_cot_action(f"I look at the header.\n[Start of Action]\n{action}\n[End of Action]", action).startswith(
        "I look"
    )
    with pytest.raises(ParseError, match="exactly the given one"):
        parse_cot_action('thinking\n[Start of Action]\ndo(action="Click", element="8")\n[End of Action]', action)
    with pytest.raises(ParseError, match="reasoning"):
        parse_cot_action(f"[Start of Action]\n{action}\n[End of Action]", action)


def test_plan_pairs_strip_a_leaked_index_line_and_check_the_example_number():
    text = pair(1, "Find blue shoes.\nInitial HTML State from Example Index: 2", "2") + pair(2, "Find red hats.")
    pairs = parse_pairs(text, 2, 2)
    assert [(p.query, p.example) for p in pairs] == [("Find blue shoes.", 2), ("Find red hats.", 1)]
    assert (
        pairs[0].plan
        == "## Step 1\nReasoning: the page has a search box.\nStep: Search.\n## Step 2\nReasoning: r\nStep: Answer."
    )
    with pytest.raises(ParseError, match="from 1 to 2"):
        parse_pairs(pair(1, "q", "3"), 1, 2)
    with pytest.raises(ParseError, match="Data Pair 2"):
        parse_pairs(pair(1, "q"), 2, 2)
    one = pair(1, "Mark all red hats as out of stock").replace("Initial HTML State:\n1\n", "")
    assert parse_targeted(one, "Mark all blue hats as out of stock").query == "Mark all red hats as out of stock"
    with pytest.raises(ParseError, match="is the example's query"):
        parse_targeted(one, "mark all red hats as out of stock.")


# -- stores ----------------------------------------------------------------------------------------------


def test_a_torn_batch_is_dropped_whole_and_repeated_keys_once(tmp_path):
    store = JsonlStore(tmp_path / "x.jsonl")
    store.append([{"key": "a", "batch": "b0", "batch_size": 2}, {"key": "b", "batch": "b0", "batch_size": 2}])
    store.append([{"key": "single"}, {"key": "single"}])
    with open(store.path, "a") as fh:  # a killed writer: one line of a two-line batch, then a torn line
        fh.write(json.dumps({"key": "c", "batch": "b1", "batch_size": 2}) + "\n" + '{"key": "d", "ba')
    assert [r["key"] for r in store.load()] == ["a", "b", "single"]
    assert len(store.path.read_text().splitlines()) == 3  # rewritten without them
    store.append([{"key": "e"}])
    assert store.keys() == {"a", "b", "single", "e"}


# -- evaluated tasks never seed -----------------------------------------------------------------------------


def test_webarena_lite_and_named_evaluation_sets_are_kept_out_of_every_seed_pool():
    exclusion = Exclusion.of(["local:site=reddit"])
    lite = task_config("webarena-lite/0")
    assert exclusion.reason("webarena-lite/0", "x") and exclusion.reason(f"webarena/{lite['old_task_id']}", "x")
    assert exclusion.reason(None, lite["intent"].upper() + " ")  # the same words under another id
    assert exclusion.reason("webarena/local.203", "x")  # named for evaluation
    splits = split(seed_tasks("local"), exclusion, 0.1)
    pool = splits.train + splits.validation
    assert pool and not any("reddit" in t.info.sites for t in pool)
    assert all(exclusion.reason(t.env_id, t.intent) is None for t in pool)
    reasons = {e["env_id"]: e["reason"] for e in splits.excluded}
    reddit = {t.env_id for t in seed_tasks("local:site=reddit")}
    assert all("will be evaluated" in reasons[e] for e in reddit)
    same_words = [e for e, r in reasons.items() if "intent is an evaluated task" in r]
    assert same_words and reddit.isdisjoint(same_words)  # local tasks that ask Lite's test questions word for word
    again = split(seed_tasks("local"), exclusion, 0.1)  # seed 42: the same held-out tasks every time
    assert [t.env_id for t in again.validation] == [t.env_id for t in splits.validation] != []
    assert {t.info.template_id for t in splits.validation}.isdisjoint({t.info.template_id for t in splits.train})
    with pytest.raises(SeedLeakError, match="webarena/local.203 will be evaluated"):
        exclusion.check([("webarena/local.203", "List all forums")], "the test pool")
    with pytest.raises(SeedLeakError):  # the real WebArena pool minus nothing: Lite's originals are in it
        Exclusion.of().check(((t.env_id, t.intent) for t in seed_tasks("webarena:site=map")), "a pool")
    real = split(seed_tasks("webarena:site=map"), Exclusion.of(), 0.0)
    assert real.train and len(real.excluded) >= 26  # Lite's 26 map tasks (and their twins) are out


def synth_run_config(out, *options: str) -> SynthConfig:
    from webarena_gym.experiments.cli import build_parser
    from webarena_gym.experiments.synth.cli import config_from

    argv = ["synth", "run", "--out", str(out), "--teacher-model", "gpt-4o", *options]
    return config_from(build_parser().parse_args(argv))


def test_synth_run_by_default_keeps_compares_default_evaluation_set_out_of_its_seeds(tmp_path):
    cfg = synth_run_config(tmp_path / "run")
    assert cfg.seeds == "local" and cfg.eval_tasks == ("local",)  # compare's default --tasks
    with pytest.raises(SeedLeakError, match="the seed pool is empty: every task of local is evaluated"):
        run(cfg, (1,), script=Script({}), echo=lambda line: None)
    assert not (tmp_path / "run" / "stage1").exists()  # nothing generated, no teacher call made


def test_synth_run_warns_when_the_seed_set_overlaps_the_evaluation_sets(tmp_path):
    said: list[str] = []
    cfg = synth_run_config(tmp_path / "a", "--seeds", "local:site=reddit", "--eval-tasks", "webarena/local.203")
    run(cfg, (), script=Script({}), echo=said.append)
    warning = [line for line in said if line.startswith("warning:")]
    assert len(warning) == 1 and "tasks of the seed set local:site=reddit are evaluation tasks" in warning[0]
    assert "webarena/local.203" in warning[0]
    said.clear()
    disjoint = synth_run_config(tmp_path / "b", "--seeds", "webarena/local.224", "--eval-tasks", "webarena/local.203")
    run(disjoint, (), script=Script({}), echo=said.append)
    assert not [line for line in said if line.startswith("warning:")]


# -- the teacher -----------------------------------------------------------------------------------------


def test_teacher_reasks_with_the_error_then_gives_up(tmp_path):
    answers = ["no plan at all", grounded([[0], [1]])]
    teacher = Teacher("gpt-4o", script=Script({"plan_annotator": answers}), max_retries=3)
    steps, text = teacher.ask(
        "plan_annotator", [{"role": "user", "content": "plan"}], lambda t: parse_grounded(t, 0, 1)
    )
    assert len(steps) == 2 and text == answers[1]
    calls = teacher._calls
    assert len(calls) == 2 and calls[1].messages[-2] == {"role": "assistant", "content": "no plan at all"}
    assert "Step 1" in calls[1].messages[-1]["content"] and "could not be used" in calls[1].messages[-1]["content"]
    spent = teacher.spent()
    assert spent.calls == 2 and spent.prompt_tokens > 0 and spent.cost > 0  # priced like a real gpt-4o call
    assert teacher.provenance("plan_annotator", 7) == {
        "role": "plan_annotator",
        "model": "gpt-4o",
        "temperature": 0.0,
        "seed": 7,
    }
    stubborn = Teacher("gpt-4o", script=Script({"orm": Script.forever("maybe")}), max_retries=2)
    with pytest.raises(TeacherGaveUp) as gave_up:
        stubborn.ask("orm", [{"role": "user", "content": "judge"}], lambda t: parse_classification(t, ("Other",)))
    assert gave_up.value.answer == "maybe" and len(stubborn._calls) == 3
    estimate = stubborn.estimate("orm", [[{"role": "user", "content": "judge " * 100}]], 10)
    assert estimate["calls"] == 10 and estimate["prompt_tokens"] > 1000 and estimate["cost"] > 0


# -- Stage 3 -----------------------------------------------------------------------------------------------


def test_expansion_takes_sites_in_turn_and_each_pair_reuses_its_seeds_page(tmp_path):
    run_dir = tmp_path / "run"
    trajectory_fixture(run_dir, 2)
    trajectory_fixture(run_dir, 2, "webarena/local.224", intent='Search the site for posts about "telescope".')
    trajectory_fixture(
        run_dir, 3, "webarena/local.0", "shopping", "Get the order number of my most recent cancelled order"
    )
    shown: list[str] = []

    def expander(messages):  # every pair starts from the page of the call's last example
        shown.append(messages[0]["content"])
        n, last = re.search(r"Write (\d+) new data pairs.* from 1 to (\d+)\.", messages[-1]["content"]).groups()
        return "".join(pair(i, f"New task {len(shown)}.{i}", last) for i in range(1, int(n) + 1))

    seeds = "webarena/local.203,webarena/local.224,webarena/local.0"
    cfg = SynthConfig(out=run_dir, teacher_model="gpt-4o", seeds=seeds, validation_fraction=0, queries=0,
                      n_seed=5, n_new=2, n_expand=8, cot=False, concurrency=1, progress=False)  # fmt: skip
    run(
        cfg,
        (2, 3),
        script=Script({r: Script.forever(a) for r, a in {**teacher_script(), "expander": expander}.items()}),
        echo=lambda line: None,
    )
    plans = {p["key"]: p for p in schemas.validate_file("plans", run_dir / "stage2/plans.jsonl")}
    pairs = schemas.validate_file("expansion", run_dir / "stage3/expansion.jsonl")
    assert [p["site"] for p in pairs] == ["reddit"] * 2 + ["shopping"] * 2 + ["reddit"] * 2 + ["shopping"] * 2
    for p in pairs:
        seed = plans[p["source"]]
        assert p["source"] == p["seeds"][p["seed_index"] - 1] and seed["site"] == p["site"]
        assert p["page"] == seed["page"] and {plans[s]["site"] for s in p["seeds"]} == {p["site"]}
    assert {p["seed_index"] for p in pairs if p["site"] == "reddit"} == {2}  # the second of the two seeds shown
    assert "reddit link 0" in shown[0] and "shopping" not in shown[0] and "shopping link 0" in shown[1]
    assert ' id="' not in shown[0]  # planners read pages without element ids


def test_the_cot_planner_set_keeps_the_expansion_pairs_with_their_reasoning(tmp_path):
    run_dir = tmp_path / "run"
    trajectory_fixture(run_dir, 2)
    trajectory_fixture(run_dir, 2, "webarena/local.224", intent='Search the site for posts about "telescope".')
    seeds = "webarena/local.203,webarena/local.224"
    cfg = SynthConfig(out=run_dir, teacher_model="gpt-4o", seeds=seeds, validation_fraction=0, queries=0,
                      n_seed=5, n_new=3, n_expand=6, cot=True, concurrency=1, progress=False)  # fmt: skip
    script = Script({r: Script.forever(a) for r, a in teacher_script().items()})
    run(cfg, (2, 3), script=script, echo=lambda line: None)
    pairs = schemas.validate_file("expansion", run_dir / "stage3/expansion.jsonl")
    traces = {r["ref"]: r for r in schemas.validate_file("cot", run_dir / "stage2/cot.jsonl") if r["kind"] == "plan"}
    assert len(pairs) == 6 and all(p["key"] in traces and traces[p["key"]]["reasoning"] for p in pairs)
    export_training(run_dir, tmp_path / "train")
    planner_cot = [
        json.loads(line)
        for split in ("train", "validation")
        if (tmp_path / "train" / f"chat/planner_cot.{split}.jsonl").exists()
        for line in (tmp_path / "train" / f"chat/planner_cot.{split}.jsonl").read_text().splitlines()
    ]
    assert len(planner_cot) == 2 + 6  # the grounded plans and every expansion pair
    synthetic = [r for r in planner_cot if r["source"] == "expansion"]
    assert len(synthetic) == 6 and all("</think>" in r["messages"][-1]["content"] for r in synthetic)
    run(cfg, (3,), resume=True, script=Script({}), echo=lambda line: None)  # nothing asked twice on resume


# -- a killed run resumes without duplicates ----------------------------------------------------------------


def synth_command(run_dir: Path, url: str, *extra: str) -> list[str]:
    """``webarena-gym synth run`` of Stages 2 and 3 with every teacher role served by ``url``."""
    roles = [f"--role-model={role}=openai/{role}" for role in teacher_script()]
    return [
        str(Path(sys.executable).with_name("webarena-gym")),
        *("synth", "run", "--out", str(run_dir), "--stages", "2,3", "--teacher-model", "openai/teacher"),
        *("--teacher-api-base", url, *roles, "--seeds", "webarena/local.203", "--validation-fraction", "0"),
        *("--eval-tasks", "local:site=shopping"),  # not the default (all local tasks): the seed is learned from
        *("--queries", "0", "--demonstrator", "none", "--n-seed", "2", "--n-new", "2", "--expand", "12"),
        *("--concurrency", "2", "--no-progress", *extra),
    ]


def _records(run_dir: Path) -> dict[str, list[dict]]:
    return {
        name: JsonlStore(run_dir / f"{stage}/{name}.jsonl").load()
        for stage, name in (("stage2", "plans"), ("stage2", "replans"), ("stage2", "cot"), ("stage3", "expansion"))
    }


@pytest.mark.slow
def test_a_killed_run_resumes_without_repeating_or_duplicating_items(tmp_path):
    run_dir = tmp_path / "run"
    trajectory_fixture(run_dir, 6)  # 1 plan + 5 replans + 1 + 5 + 6 CoT traces, then 6 expansion calls and 12 traces
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-local-test"}
    with TeacherServer(teacher_script(), delay=0.4) as server:
        proc = subprocess.Popen(synth_command(run_dir, server.url), env=env, cwd=tmp_path)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (run_dir / "stage2" / "cot.jsonl").exists():
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = _records(run_dir)
        answered_before = len(server.roles)
    done_before = sum(len(v) for v in before.values())
    assert before["plans"] and before["cot"] and not before["expansion"]
    assert answered_before >= done_before  # a call answered just before the kill may have left no record

    with TeacherServer(teacher_script()) as server:
        fresh = subprocess.run(synth_command(run_dir, server.url), env=env, cwd=tmp_path, capture_output=True)
        assert fresh.returncode == 1 and b"--resume" in fresh.stderr  # a run directory is never overwritten
        done = subprocess.run(
            synth_command(run_dir, server.url, "--resume"), env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    after = _records(run_dir)
    for name, records in after.items():
        keys = [r["key"] for r in records]
        assert len(keys) == len(set(keys)), f"duplicates in {name}"
        schemas.validate_records(name, records)
    # Stage 2's 12 traces, and one more per expansion pair (the reasoning of its plan, synthetic_cot)
    assert len(after["plans"]) == 1 and len(after["replans"]) == 5 and len(after["cot"]) == 12 + 12
    assert len(after["expansion"]) == 12 and len({r["batch"] for r in after["expansion"]}) == 6
    stage2_items = 1 + 5 + 12
    # the resumed run asked only for what was missing
    assert len(server.roles) == stage2_items + 6 + 12 - done_before
    for name, old in before.items():  # what was there before the kill is kept as it was
        assert all(record in after[name] for record in old)
    assert "[stage 2] estimate before starting" in done.stdout and "[stage 3] spent: $" in done.stdout
    assert "| 3 | expansion pairs | 12 | 12 |" in done.stdout  # the summary, per site (reddit)
    assert all(r["teacher"]["model"] == "openai/expander" for r in after["expansion"])
    for path in run_dir.rglob("*.json*"):
        assert str(tmp_path) not in path.read_text() and "sk-local-test" not in path.read_text(), path
