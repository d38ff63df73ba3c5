"""The synthetic-data pipeline end to end on local tasks: a real browser, sites and evaluator, a demonstrator
policy of the project, and a scripted teacher through litellm's real call path.

The teacher writes four queries from the seed tasks (one repeats an evaluated task, one is infeasible);
the demonstrator (``plan_and_act_no_planner`` whose scripted executor replays reference solutions) acts
them out and the seed tasks too; the ORM keeps one synthetic episode and rejects the other; then grounded
plans, replans and CoT traces, expansion pairs, the failure analysis of a validation study and targeted
pairs. Every file is checked against its schema, the run resumes without a single call, and the training
files and a study export load as training data."""

from __future__ import annotations

import functools
import importlib.util
import json
import re

import pytest
from synth_support import grounded, pair, teacher_script

from webarena_gym.benchmarks.support.oracle import WebRLOracle
from webarena_gym.experiments.compare import EpisodeJob, PolicySpec, compare, run_job
from webarena_gym.experiments.dataset_files import check_layout
from webarena_gym.experiments.datasets import export_study
from webarena_gym.experiments.datasets import main as dataset_main
from webarena_gym.experiments.synth import schemas
from webarena_gym.experiments.synth.context import FILES, SynthConfig
from webarena_gym.experiments.synth.pipeline import run
from webarena_gym.experiments.synth.store import JsonlStore
from webarena_gym.experiments.synth.training import export_training
from webarena_gym.experiments.synth.work import StageAborted
from webarena_gym.llm import Script
from webarena_gym.policies import make_policy
from webarena_gym.wrappers.observations.html import strip_ids

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SEEDS = "webarena/local.203,webarena/local.224,webarena/local.204"
EVALUATED = "webarena/local.204"  # 'List all forums whose names start with the letter "S".'
VALIDATION = "webarena/local.206"
DEMO = PolicySpec("plan_and_act_no_planner", {"model": "gpt-4o"}, "plan_and_act_no_planner [gpt-4o]")


def demonstrator(job: EpisodeJob):
    """The executor replays the reference solution of the task its env runs (a synthetic query's example)."""
    oracle = WebRLOracle(job.task.task_id, cot=False)
    return oracle.attach(
        make_policy("plan_and_act_no_planner", model="gpt-4o", script=Script({"executor": [oracle] * 12}))
    )


def gives_up(job: EpisodeJob):
    return make_policy(
        "plan_and_act_no_planner", model="gpt-4o", script=Script({"executor": ['exit(message="no idea")']})
    )


def refuses(job: EpisodeJob):
    raise AssertionError(f"a resumed run ran the episode {job.key} again")


def _section(text: str, header: str) -> str:
    return text.split(f"## {header}\n", 1)[1].split("\n\n## ", 1)[0].strip()


def full_teacher(asked: list[str]) -> Script:
    def queries(messages):
        text = messages[-1]["content"]
        number = {m.group(2): m.group(1) for m in re.finditer(r"# Example (\d+)\nStart page: .*\nTask: (.*)", text)}
        forums = number['List all forums whose names start with the letter "B".']
        search = number['Search the site for posts about "telescope".']
        tasks = [
            ("Which forums have a name that begins with the letter B?", forums),
            ("Use the site's search to find posts that mention telescopes.", search),
            ('List all forums whose names start with the letter "S".', forums),  # an evaluated task's words
            ("Order a pizza delivery to my home.", forums),
        ]
        return "\n".join(
            f"[Start Task {i}]\nTask: {t}\nInitial HTML State from Example Index: {n}\n[End Task {i}]"
            for i, (t, n) in enumerate(tasks, 1)
        )

    def feasibility(messages):
        verdicts = ["FEASIBLE", "FEASIBLE", "FEASIBLE", "INFEASIBLE"]
        return "\n".join(f"## Task {i}\nVerdict: {v}\nReason: looked at it" for i, v in enumerate(verdicts, 1))

    def orm(messages):
        task = _section(messages[-1]["content"], "Task")
        verdict = "FAILURE" if "telescope" in task else "SUCCESS"
        return f"## Reasoning\nThe final message and page show it.\n## Verdict\n{verdict}"

    answers = teacher_script()
    first_plan = []

    def plan_annotator(messages):  # the first answer breaks the paper's order rule and is asked again
        if not first_plan:
            first_plan.append(1)
            return grounded([[0, 2], [1]])
        return answers["plan_annotator"](messages)

    def classifier(messages):
        query = messages[-1]["content"].split("User Query: ", 1)[1].split("\n", 1)[0]
        label = "Class A" if "forum" in query.lower() else "Other"
        return f"## Reasoning\nIt teaches navigation.\n## Classification\n{label}"

    def targeted(messages):
        query = messages[-1]["content"].split("# Given Example\n", 1)[1].split("User Query:\n", 1)[1].split("\n")[0]
        return pair(1, f"Could you tell me this: {query}").replace("Initial HTML State:\n1\n", "")

    roles = {
        "query_generator": queries,
        "feasibility": feasibility,
        "orm": orm,
        **answers,
        "plan_annotator": plan_annotator,
        "failure_classifier": lambda m: "## Reasoning\nIt posted anew.\n## Classification\nClass A",
        "classifier": classifier,
        "targeted": targeted,
    }

    def logged(role, answer):
        return Script.forever(lambda messages: (asked.append(role), answer(messages))[1])

    return Script({role: logged(role, answer) for role, answer in roles.items()})


def config(tmp_path, validation) -> SynthConfig:
    return SynthConfig(
        out=tmp_path / "run",
        teacher_model="gpt-4o",
        seeds=SEEDS,
        eval_tasks=(EVALUATED,),
        validation_fraction=0.0,
        n_seed=2,
        n_new=4,
        queries=4,
        demonstrator=DEMO,
        n_expand=4,
        n_targeted=2,
        validation_study=validation,
        concurrency=2,
        progress=False,
    )


def test_every_stage_on_local_tasks_then_resume_and_export(tmp_path):
    validation = compare([DEMO], VALIDATION, tmp_path / "validation", progress=False,
                         runner=functools.partial(run_job, build_policy=gives_up))  # fmt: skip
    asked: list[str] = []
    cfg = config(tmp_path, validation)
    printed: list[str] = []
    table = run(cfg, script=full_teacher(asked), build_policy=demonstrator, echo=printed.append)
    out = cfg.out

    records = {name: schemas.validate_file(name, out / path) for name, path in FILES.items()}
    for stage in (1, 2, 3, 4):
        rejected = out / f"stage{stage}" / "rejected.jsonl"
        if rejected.exists():
            schemas.validate_file("rejected", rejected)

    # Stage 1: queries, their filters, the rollouts and the outcome filter
    queries = records["queries"]
    assert [q["feasible"] for q in queries] == [True, True, True, False]
    assert "evaluated task" in queries[2]["dropped"] and queries[0]["dropped"] is None
    assert all(q["teacher"]["role"] == "query_generator" and q["teacher"]["model"] == "gpt-4o" for q in queries)
    study = json.loads((out / "stage1" / "study" / "study.json").read_text())
    assert sorted(study["tasks"]) == sorted(
        [f"webarena/local.203#{queries[0]['key']}", f"webarena/local.224#{queries[1]['key']}",
         "webarena/local.203", "webarena/local.224"]
    )  # fmt: skip
    splits = json.loads((out / "splits.json").read_text())
    assert EVALUATED not in splits["train"] and splits["excluded"][0]["env_id"] == EVALUATED
    trajs = {t["task_id"]: t for t in records["trajectories"]}
    synthetic = trajs[f"webarena/local.203#{queries[0]['key']}"]
    assert synthetic["intent"] == queries[0]["intent"] and synthetic["kept"] and synthetic["outcome"]["method"] == "orm"
    assert synthetic["steps"][-1]["action"].endswith('exit(message="books, boston")')
    first_page = (out / "pages" / f"{synthetic['steps'][0]['page']}.html").read_text()
    assert ' id="' in first_page and "Forums" in first_page  # the page the executor saw, with its ids
    assert ' id="' in synthetic["steps"][0]["snippet"]  # what a snippet-style executor history shows of it
    rejected_by_orm = trajs[f"webarena/local.224#{queries[1]['key']}"]
    assert not rejected_by_orm["kept"] and rejected_by_orm["outcome"]["teacher"]["role"] == "orm"
    for seed in ("webarena/local.203", "webarena/local.224"):
        assert trajs[seed]["kept"] and trajs[seed]["outcome"] == {
            "method": "evaluator", "success": True, "score": 1.0, "reasoning": "", "teacher": None,
        }  # fmt: skip
    kept = [t for t in records["trajectories"] if t["kept"]]
    assert len(kept) == 3

    # Stage 2: a grounded plan per kept trajectory (one re-asked), a replan per later step, CoT traces
    assert asked.count("plan_annotator") == 4 and len(records["plans"]) == 3
    for plan in records["plans"]:
        covered = [a for s in plan["steps"] for a in s["actions"]]
        assert covered == list(range(plan["n_actions"]))
    later_steps = sum(len(t["steps"]) - 1 for t in kept)
    assert len(records["replans"]) == later_steps
    kinds = [c["kind"] for c in records["cot"]]
    synthetic = len(records["expansion"]) + len(records["targeted"])  # Stages 3 and 4 reason about their pairs
    assert kinds.count("plan") == 3 + synthetic and kinds.count("replan") == later_steps
    assert kinds.count("action") == sum(len(t["steps"]) for t in kept)

    # Stage 3 reuses seed pages by index; Stage 4 aims at the validation study's failure class
    plan_pages = {p["key"]: p["page"] for p in records["plans"]}
    assert len(records["expansion"]) == 4
    for p in records["expansion"]:
        assert p["source"] == p["seeds"][p["seed_index"] - 1] and p["page"] == plan_pages[p["source"]]
    assert [f["label"] for f in records["failures"]] == ["A"] and records["failures"][0]["site"] == "reddit"
    assert {c["label"] for c in records["classified"]} <= {"A", "Other"} and len(records["targeted"]) == 2
    assert all(t["intent"].startswith("Could you tell me this:") for t in records["targeted"])
    assert "| 1 | trajectories kept | 3 | 3 |" in table and "reddit" in table
    assert any("estimate before starting" in line for line in printed)
    assert any(line.startswith("[stage 2] spent: $") for line in printed)

    # nothing leaks: no evaluated task in any seed list, no machine path in any file
    for q in queries:
        assert EVALUATED not in q["seeds"] and q["start_task"] != EVALUATED
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            assert str(tmp_path) not in path.read_text(), path

    # a resumed run has nothing left to do: no teacher call, no episode
    lines = {name: len((out / path).read_text().splitlines()) for name, path in FILES.items()}
    run(cfg, resume=True, script=Script({}), build_policy=refuses, echo=printed.append)
    assert lines == {name: len((out / path).read_text().splitlines()) for name, path in FILES.items()}
    with pytest.raises(FileExistsError):
        run(cfg, script=Script({}), build_policy=refuses, echo=printed.append)
    with pytest.raises(StageAborted):  # a larger target needs a call: the teacher is asked, and fails cleanly
        run(SynthConfig(**{**vars(cfg), "n_expand": 6}), (3,), resume=True, script=Script({}), echo=printed.append)
    more: list[str] = []  # ... and once it answers, only the missing batch is asked for (whole calls: 4 + 4)
    run(SynthConfig(**{**vars(cfg), "n_expand": 6}), (3,), resume=True, script=full_teacher(more), echo=printed.append)
    assert more == ["expander"] + ["cot"] * 4 and len(JsonlStore(out / FILES["expansion"]).load()) == 8

    # training files in the paper's formats, loadable as datasets
    counts = export_training(out, tmp_path / "train")
    layout = check_layout(tmp_path / "train")
    assert set(layout) == {"planner", "replanner", "executor", "planner_cot", "replanner_cot", "executor_cot"}
    assert sum(layout["planner"].values()) == 3 + 8 + 2 and sum(layout["executor"].values()) == kinds.count("action")
    assert sum(layout["planner_cot"].values()) == 3 + 8 + 2  # the synthetic pairs have their reasoning too
    for name in layout:
        for path in (tmp_path / "train").glob(f"*/{name}.*.jsonl"):
            schemas.validate_file(path.parent.name, path)
    executor = [
        json.loads(line) for line in (tmp_path / "train" / "chat/executor.train.jsonl").read_text().splitlines()
    ]
    example = executor[0]["messages"]
    assert example[0]["role"] == "system" and "# Global Plan\n" in example[0]["content"]
    assert ' id="' in example[-2]["content"] and example[-1]["content"].startswith(("do(", "# ", "exit("))
    cot = json.loads((tmp_path / "train" / "chat/executor_cot.train.jsonl").read_text().splitlines()[0])
    assert (
        cot["messages"][-1]["content"].startswith("<think>\nI find the element")
        and "[End of Action]" in cot["messages"][-1]["content"]
    )
    planner = json.loads((tmp_path / "train" / "chat/planner.train.jsonl").read_text().splitlines()[0])
    assert ' id="' not in planner["messages"][1]["content"] and planner["messages"][-1]["content"].startswith(
        "## Step 1"
    )
    assert {"task_id", "site", "study"} <= set(planner)
    tune = json.loads((tmp_path / "train" / "torchtune/planner.train.jsonl").read_text().splitlines()[0])
    assert tune["input"].startswith("<|begin_of_text|><|start_header_id|>system") and tune["input"].endswith(
        "assistant<|end_header_id|>\n\n"
    )
    info = json.loads((tmp_path / "train" / "dataset_info.json").read_text())
    assert info["planner_train_chat"]["formatting"] == "sharegpt" and "planner_train" in info
    assert all(str(tmp_path) not in p.read_text() for p in (tmp_path / "train").rglob("*.jsonl"))
    assert counts

    # any study as a training set: the demonstrator's successful episodes
    exported = export_study(out / "stage1" / "study", tmp_path / "from-study", min_reward=1.0, sites=["reddit"])
    assert exported["episodes"] == 2
    rows = check_layout(tmp_path / "from-study")
    steps = schemas.validate_file("steps", tmp_path / "from-study" / "data/steps.train.jsonl")
    chats = schemas.validate_file("chat", tmp_path / "from-study" / "data/chat.train.jsonl")
    assert rows == {"steps": {"train": len(steps)}, "chat": {"train": len(chats)}}
    assert {s["task_id"] for s in steps} == {"webarena/local.203", "webarena/local.224"}
    assert all(s["study"] == "study" and s["site"] == "reddit" for s in steps)
    assert [s["done"] for s in steps if s["task_id"] == "webarena/local.203"] == [False, False, True]
    assert steps[0]["observation"].startswith("<") and strip_ids(steps[0]["observation"]) != steps[0]["observation"]
    assert all(c["role"] == "executor" and c["messages"][-1]["role"] == "assistant" for c in chats)
    # the command's filters: by policy (label or name) and by reward
    by_policy = tmp_path / "by-policy"
    assert dataset_main([str(out / "stage1" / "study"), "--out", str(by_policy), "--policy", "react"]) == 0
    assert not (by_policy / "data").exists()
    study_args = [str(out / "stage1" / "study"), "--out", str(by_policy), "--policy", "plan_and_act_no_planner"]
    assert dataset_main([*study_args, "--max-reward", "0", "--validation-fraction", "0.5", "--force"]) == 0  # replaces
    unscored = schemas.validate_file("steps", by_policy / "data/steps.train.jsonl")
    unscored += schemas.validate_file("steps", by_policy / "data/steps.validation.jsonl")
    assert {s["task_id"].split("#")[0] for s in unscored} == {"webarena/local.203", "webarena/local.224"}
    assert all(s["episode_reward"] == 0.0 and "#" in s["task_id"] for s in unscored)  # the synthetic queries
    held = [{c["task_id"] for c in schemas.validate_file("chat", by_policy / f"data/chat.{split}.jsonl")}
            for split in ("train", "validation")]  # fmt: skip
    assert all(held) and held[0].isdisjoint(held[1])  # whole tasks are held out

    if importlib.util.find_spec("datasets"):  # where the library is installed, it loads both layouts too
        import datasets

        assert len(datasets.load_dataset(str(tmp_path / "train"), "planner")["train"]) == layout["planner"]["train"]
        assert len(datasets.load_dataset(str(tmp_path / "from-study"), "steps")["train"]) == len(steps)
