"""Which tasks may seed the pipeline: the evaluation exclusion, seed pools and the held-out split.

The rule: WebArena-Lite's 165 test tasks stay out of every seed pool, and the validation set used for
failure analysis is separate from the test set. Here that is a check, not a convention:

* :class:`Exclusion` holds every task that will be evaluated: WebArena-Lite's test tasks always (with
  the WebArena tasks they correct, ``old_task_id``), plus every task set named with ``--eval-tasks``.
  A task is excluded by its env id and also by its intent (the same words under another id are the same
  test question).
* :meth:`Exclusion.check` raises :class:`SeedLeakError` before a stage makes any call when something it
  is about to learn from (seed tasks, imported trajectories, plans, a validation study) is evaluated;
  generated queries that repeat an evaluated intent are dropped (:meth:`Exclusion.reason`).
* :func:`split` draws the held-out validation tasks from the seed pool by intent template (tasks of one
  template are near-copies), with a fixed seed, and the seed pool keeps only the rest.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webarena_gym.experiments import tasksets
from webarena_gym.experiments.synth.parsing import normalize
from webarena_gym.experiments.tasksets import TaskInfo

EVALUATION_SETS = ("webarena:lite",)  # always evaluated: the paper's test set
SPLIT_SEED = 42  # the released code's validation-split seed


class SeedLeakError(ValueError):
    """Something a stage would learn from is a task that will be evaluated."""


def task_config(env_id: str) -> dict[str, Any]:
    """The raw task config (placeholders unreplaced) of a WebArena, WebArena-Lite or local env id."""
    from webarena_gym.envs import registration

    if env_id.startswith(registration.VERIFIED_NAMESPACE + "/"):
        raise ValueError(
            f"{env_id} is not a WebArena-style task (seed pools take local, webarena and webarena-lite tasks)"
        )
    return registration.task_config(env_id)


def identities(env_id: str) -> set[str]:
    """The env ids that are the same task: a WebArena-Lite task is also the WebArena task it corrects."""
    from webarena_gym.envs import registration

    if env_id.startswith(registration.LITE_NAMESPACE + "/"):
        return {env_id, f"{registration.NAMESPACE}/{task_config(env_id)['old_task_id']}"}
    return {env_id}


@dataclass(frozen=True)
class Exclusion:
    """The tasks that will be evaluated (see the module docstring)."""

    specs: tuple[str, ...]
    env_ids: frozenset[str]
    intents: frozenset[str]

    @classmethod
    def of(cls, specs: Sequence[str] = ()) -> Exclusion:
        specs = tuple(dict.fromkeys([*EVALUATION_SETS, *specs]))
        env_ids: set[str] = set()
        intents: set[str] = set()
        for spec in specs:
            for task in tasksets.resolve(spec):
                if task.env_id.startswith("miniwob/"):
                    continue
                env_ids |= identities(task.env_id)
                intents.add(normalize(task_config(task.env_id)["intent"]))
        return cls(specs, frozenset(env_ids), frozenset(intents))

    def reason(self, env_id: str | None, intent: str) -> str | None:
        """Why a task (or a generated query: ``env_id`` None) must not be learned from, or None."""
        if env_id is not None and identities(env_id) & self.env_ids:
            return f"{env_id} will be evaluated ({', '.join(self.specs)})"
        if normalize(intent) in self.intents:
            return f"its intent is an evaluated task's ({intent!r})"
        return None

    def check(self, items: Iterable[tuple[str | None, str]], what: str) -> None:
        """Raise :class:`SeedLeakError` naming the first offenders when any (env id, intent) is evaluated."""
        reasons = [r for env_id, intent in items if (r := self.reason(env_id, intent))]
        if reasons:
            shown = "; ".join(reasons[:5]) + (f"; ... ({len(reasons)} in all)" if len(reasons) > 5 else "")
            raise SeedLeakError(f"{what} would leak evaluated tasks into training data: {shown}")


@dataclass(frozen=True)
class SeedTask:
    """A task that seeds generation: what the query generator and the demonstrator need of it."""

    info: TaskInfo
    intent: str
    start_url: str

    @property
    def env_id(self) -> str:
        return self.info.env_id

    @property
    def site(self) -> str:
        return self.info.site_group


def seed_tasks(spec: str) -> list[SeedTask]:
    out = []
    for info in tasksets.resolve(spec):
        config = task_config(info.env_id)
        out.append(SeedTask(info, config["intent"], config["start_url"]))
    return out


def validation_groups(groups: Sequence[str], fraction: float, seed: int = SPLIT_SEED) -> set[str]:
    """The groups held out for validation: a ``fraction`` of the distinct groups, drawn with ``seed``
    (at least one when the fraction is positive and there are two groups or more)."""
    distinct = sorted(set(groups))
    if fraction <= 0 or len(distinct) < 2:
        return set()
    n = min(len(distinct) - 1, max(1, round(fraction * len(distinct))))
    return set(random.Random(seed).sample(distinct, n))


@dataclass
class Splits:
    train: list[SeedTask]
    validation: list[SeedTask]
    excluded: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self, fraction: float, seed: int) -> dict[str, Any]:
        return {
            "validation_fraction": fraction,
            "seed": seed,
            "group_by": "intent template",
            "train": [t.env_id for t in self.train],
            "validation": [t.env_id for t in self.validation],
            "excluded": self.excluded,
        }


def _suite(env_id: str) -> str:
    """The suite an env id belongs to (intent template ids are numbered per suite)."""
    from webarena_gym.envs.registration import LOCAL_PREFIX

    return "local" if env_id.startswith(LOCAL_PREFIX) else env_id.partition("/")[0]


def split(seeds: Sequence[SeedTask], exclusion: Exclusion, fraction: float, seed: int = SPLIT_SEED) -> Splits:
    """Drop evaluated tasks, then hold out whole intent templates for validation."""
    excluded, pool = [], []
    for task in seeds:
        reason = exclusion.reason(task.env_id, task.intent)
        if reason:
            excluded.append({"env_id": task.env_id, "reason": reason})
        else:
            pool.append(task)
    templates = [f"{_suite(t.env_id)}:{t.info.template_id}" for t in pool]
    held = validation_groups(templates, fraction, seed)
    train = [t for t, g in zip(pool, templates, strict=True) if g not in held]
    validation = [t for t, g in zip(pool, templates, strict=True) if g in held]
    exclusion.check(((t.env_id, t.intent) for t in train + validation), "the seed pool")
    return Splits(train, validation, excluded)
