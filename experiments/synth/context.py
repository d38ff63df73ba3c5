"""A run of the pipeline: its options (with the paper's defaults), its directory and what stages share.

Layout of a run directory (every stage's output is its own JSONL file; see ``schemas.py``)::

    synth.json                  the options, the seed splits and the evaluation exclusion (no keys, no paths)
    splits.json                 seed pool, held-out validation tasks, excluded (evaluated) tasks
    costs.jsonl                 estimate before and spending after every stage
    pages/<sha256>.html         every page a record refers to, stored once
    stage1/queries.jsonl        generated queries with their feasibility verdicts
    stage1/study/               the demonstrator's episodes (a study: results.jsonl, trajectories, report)
    stage1/trajectories.jsonl   every finished episode with its outcome (evaluator or ORM) and kept flag
    stage2/plans.jsonl          a grounded plan per kept trajectory
    stage2/replans.jsonl        a replan per later step of each kept trajectory
    stage2/cot.jsonl            reasoning traces for plans, replans and actions
    stage3/expansion.jsonl      synthetic query-plan pairs
    stage4/failures.jsonl       the failure class of each failed validation episode
    stage4/classified.jsonl     the failure class of each training point
    stage4/targeted.jsonl       pairs generated from the points of the classes that failed
    stageN/rejected.jsonl       items the teacher could not produce in the required form (not retried)
    summary.json, summary.md    counts per stage and per site
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webarena_gym.experiments.synth.costs import CostLog
from webarena_gym.experiments.synth.splits import SPLIT_SEED, Exclusion
from webarena_gym.experiments.synth.store import JsonlStore, PageStore
from webarena_gym.experiments.synth.teacher import RoleSettings, Teacher, TeacherGaveUp

if TYPE_CHECKING:
    from webarena_gym.experiments.compare import EpisodeJob, PolicySpec
    from webarena_gym.policies.base import Policy

FILES = {
    "queries": "stage1/queries.jsonl",
    "trajectories": "stage1/trajectories.jsonl",
    "plans": "stage2/plans.jsonl",
    "replans": "stage2/replans.jsonl",
    "cot": "stage2/cot.jsonl",
    "expansion": "stage3/expansion.jsonl",
    "failures": "stage4/failures.jsonl",
    "classified": "stage4/classified.jsonl",
    "targeted": "stage4/targeted.jsonl",
}
STUDY_DIR = "stage1/study"
# Options that decide which items exist and how they are seeded: a resumed run must keep them.
FIXED_ON_RESUME = ("seeds", "eval_tasks", "validation_fraction", "split_seed", "seed", "n_seed", "n_new")


@dataclass
class SynthConfig:
    """The pipeline's options. Defaults: P = the paper, C = the authors' code, I = ours (both are silent)."""

    out: Path
    teacher_model: str
    seeds: str = "local"  # the task set seeding Stage 1 (evaluated tasks are removed from it)
    eval_tasks: tuple[str, ...] = ()  # task sets that will be evaluated; WebArena-Lite's test set always is
    validation_fraction: float = 0.1  # [I] seed templates held out for the failure-analysis study
    split_seed: int = SPLIT_SEED  # [C] 42
    seed: int = 0  # sampling seed of the run (which seeds each call sees)
    n_seed: int = 5  # [P] seed examples per generation call
    n_new: int = 10  # [P] new items per generation call
    queries: int = 1000  # [I] queries to generate (the paper keeps 923 trajectories, not saying of how many)
    seed_rollouts: bool = True  # [I] also roll out the seed tasks, scored by their own evaluator
    demonstrator: PolicySpec | None = None  # any policy of the project; None: Stage 1 generates no episodes
    outcome: str = "auto"  # "auto": the env's evaluator where the task has one, else the ORM; "orm": ORM always
    workers: int = 1  # demonstrator episodes at once
    max_steps: int | None = None  # demonstrator budget (default: the policy's own)
    import_studies: tuple[Path, ...] = ()  # studies whose successful episodes join the trajectories
    cot: bool = True  # [P] reasoning traces for plans, replans and actions
    n_expand: int = 10_000  # [P] Stage 3 pairs
    n_targeted: int = 5_000  # [P] Stage 4 pairs
    validation_study: Path | None = None  # Stage 4's study of the held-out validation tasks
    failure_classes: Path | None = None  # a JSON file of per-site classes (default: the paper's, our words)
    all_failure_classes: bool = False  # classify training points into every class, not only the observed ones
    concurrency: int = 4  # [I] teacher calls at once
    max_retries: int = 3  # [C] re-asks per call
    orm_page_chars: int = 30_000  # [I] the last page the ORM reads is cut to this length
    roles: dict[str, RoleSettings] = field(default_factory=dict)  # per-role model/temperature/max_tokens
    teacher_api_base: str | None = None
    cache_dir: str | None = None
    progress: bool = True

    def manifest(self) -> dict[str, Any]:
        """The options as ``synth.json`` records them: no output path, studies by name only."""
        return {
            "teacher_model": self.teacher_model,
            "seeds": self.seeds,
            "eval_tasks": list(self.eval_tasks),
            "validation_fraction": self.validation_fraction,
            "split_seed": self.split_seed,
            "seed": self.seed,
            "n_seed": self.n_seed,
            "n_new": self.n_new,
            "queries": self.queries,
            "seed_rollouts": self.seed_rollouts,
            "demonstrator": None
            if self.demonstrator is None
            else {"name": self.demonstrator.name, "label": self.demonstrator.display()},
            "outcome": self.outcome,
            "max_steps": self.max_steps,
            "import_studies": [Path(p).name for p in self.import_studies],
            "cot": self.cot,
            "n_expand": self.n_expand,
            "n_targeted": self.n_targeted,
            "validation_study": Path(self.validation_study).name if self.validation_study else None,
            "failure_classes": Path(self.failure_classes).name if self.failure_classes else "default",
            "all_failure_classes": self.all_failure_classes,
            "max_retries": self.max_retries,
            "roles": {r: vars(s) for r, s in self.roles.items()},
        }


class Run:
    """A run directory and the things every stage uses: stores, pages, teacher, exclusion, cost log."""

    def __init__(
        self,
        cfg: SynthConfig,
        teacher: Teacher,
        *,
        exclusion: Exclusion | None = None,
        build_policy: Callable[[EpisodeJob], Policy] | None = None,
        echo: Callable[[str], None] = print,
    ) -> None:
        if cfg.outcome not in ("auto", "orm"):
            raise ValueError(f"outcome must be 'auto' or 'orm', not {cfg.outcome!r}")
        self.cfg = cfg
        self.dir = Path(cfg.out)
        self.teacher = teacher
        self.exclusion = exclusion or Exclusion.of(cfg.eval_tasks)
        self.build_policy = build_policy  # tests: a scripted demonstrator (picklable)
        self.echo = echo
        self.pages = PageStore(self.dir / "pages")
        self.costs = CostLog(self.dir, echo)

    def store(self, name: str) -> JsonlStore:
        return JsonlStore(self.dir / FILES[name])

    def rejected(self, stage: int) -> JsonlStore:
        return JsonlStore(self.dir / f"stage{stage}" / "rejected.jsonl")

    def reject(self, stage: int, key: str, gave_up: TeacherGaveUp, provenance: dict[str, Any], **extra: Any) -> None:
        """Record an item the teacher could not produce; it is not asked again on resume."""
        record = {
            "key": key,
            "stage": stage,
            "error": gave_up.error,
            "answer": gave_up.answer[-4000:],
            "teacher": provenance,
            **extra,
        }
        self.rejected(stage).append([record])

    def run_opts(self, desc: str) -> dict[str, Any]:
        """Options of :func:`experiments.synth.work.run_items` for one of this run's loops."""
        mark = self.teacher.mark()
        return {
            "concurrency": self.cfg.concurrency,
            "desc": desc,
            "progress": self.cfg.progress,
            "postfix": lambda: f"${self.teacher.spent(mark).cost:.2f}",
        }
