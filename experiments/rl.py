"""Train PPO (stable-baselines3 / sb3-contrib, CPU) on MiniWoB++ or WebArena tasks through the numeric wrapper.

    python -m webarena_gym.experiments.rl --tasks click-test,click-button,click-link,focus-text,click-dialog \\
        --steps 6000 --n-envs 5 --out runs/ppo-miniwob
    python -m webarena_gym.experiments.rl --tasks webarena/local.0 --steps 256 --out runs/ppo-local0

Task names without a slash are MiniWoB++ tasks (``miniwob/<name>``). One policy learns all the given
tasks at once: sub-env ``i`` of the vector env runs task ``i mod len(tasks)`` (``--vec subproc``: one
worker process per sub-env, each with its own browser; ``dummy``: all in this process). The agent sees
the numeric observation of :mod:`wrappers.numeric` (goal and element text as hashed words plus
goal-element match features) and picks a slot to click or fill; MaskablePPO (the default) never picks an
empty slot.

Written to ``--out``: ``curve.csv`` (one row per finished training episode: env steps so far, task,
reward, length), ``curve.png`` (success rate per task over env steps, moving average), TensorBoard
events under ``tb/`` when TensorBoard is installed, ``model.zip`` (the trained policy), and
``eval.json``: success per task of the trained policy (deterministic), of the rule (:func:`rule_policy`)
and of the random policy (uniform over the unmasked actions) on the same held-out seeds (from
:data:`wrappers.seeds.EVAL_SEED_BASE` on; training seeds stay below). The last line printed is a JSON summary.

With ``--validate-every N`` the policy kept is not the last one but the best of validation rounds run every
``N`` env steps and once at the end (mean deterministic success over the tasks on validation seeds, from
:data:`wrappers.seeds.VALIDATION_SEED_BASE` on, apart from training's and the held-out ones): a PPO update
now and then flips a learned choice for an update or two, and a run should not be reported by where its
clock happened to stop. The rounds' scores and the step count of the policy kept are in ``eval.json``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ALGOS = ("maskable_ppo", "ppo")
VEC_KINDS = ("subproc", "dummy")
CURVE_WINDOW = 50  # episodes per task in the curve's moving average


@dataclass
class TrainConfig:
    """One training run. Defaults are SB3's PPO defaults scaled to short episodes on 2 CPU cores."""

    tasks: list[str]
    steps: int = 6000
    n_envs: int | None = None  # default: one sub-env per task
    algo: str = "maskable_ppo"
    vec: str = "subproc"
    k: int = 16
    n_steps: int = 64  # rollout length per sub-env
    batch_size: int = 64
    n_epochs: int = 4
    learning_rate: float = 3e-4
    ent_coef: float = 0.01
    gamma: float = 0.95
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    seed: int = 0
    max_episode_steps: int | None = None  # default: each task's own budget (MiniWoB++: 10)
    allow_stop: bool | None = None  # default: only on tasks that end with an answer (not MiniWoB++)
    eval_episodes: int = 20
    time_limit_s: float | None = None  # training also ends at the first env step after this much wall time
    validate_every: int | None = None  # env steps between validation rounds; None: keep the last policy
    validation_episodes: int = 10  # validation seeds per task and round
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def env_ids(self) -> list[str]:
        return [task if "/" in task else f"miniwob/{task}" for task in self.tasks]

    def numeric_options(self, env_id: str) -> dict[str, Any]:
        stop = self.allow_stop if self.allow_stop is not None else not env_id.startswith("miniwob/")
        return {"k": self.k, "max_episode_steps": self.max_episode_steps, "numeric": {"allow_stop": stop}}


def train(config: TrainConfig, out: str | os.PathLike) -> dict[str, Any]:
    """Train (keeping the best validated policy when ``validate_every`` is set), evaluate against the rule and
    random on held-out seeds, save; returns the summary written to ``eval.json``."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

    if config.algo not in ALGOS:
        raise ValueError(f"algo must be one of {', '.join(ALGOS)}, not {config.algo!r}")
    if config.vec not in VEC_KINDS:
        raise ValueError(f"vec must be one of {', '.join(VEC_KINDS)}, not {config.vec!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)  # the browsers need the cores more than a 64-unit MLP does
    env_ids = config.env_ids
    fns = _env_fns(config)
    vec: VecEnv = SubprocVecEnv(fns, start_method="forkserver") if config.vec == "subproc" else DummyVecEnv(fns)
    vec = VecMonitor(vec)
    started, cpu_started = time.monotonic(), time.process_time()
    best = BestPolicy()
    try:
        model = _make_model(config, vec, out)
        curve = CurveRecorder(out / "curve.csv", [env_ids[i % len(env_ids)] for i in range(vec.num_envs)])
        callbacks = [curve.callback()] + ([_time_limit(config.time_limit_s)] if config.time_limit_s else [])
        if config.validate_every:
            callbacks.append(_every(config.validate_every, lambda: _validate(model, config, best)))
        model.learn(total_timesteps=config.steps, callback=callbacks)
        curve.close()
    finally:
        vec.close()
    trained_steps = int(model.num_timesteps)
    if config.validate_every:
        if not best.rounds or best.rounds[-1]["env_steps"] != trained_steps:
            _validate(model, config, best)
        best.restore(model.policy)
    train_s = time.monotonic() - started
    model.save(out / "model.zip")
    plot_curves({f"seed {config.seed}": out / "curve.csv"}, out / "curve.png")
    evaluation = {
        env_id: {
            "ppo": evaluate(model_policy(model, config.algo), env_id, config),
            "rule": evaluate(rule_policy(), env_id, config),
            "random": evaluate(random_policy(config.seed), env_id, config),
        }
        for env_id in env_ids
    }
    summary = {
        "config": asdict(config),
        "train_env_steps": trained_steps,
        "train_wall_s": round(train_s, 1),
        "train_main_process_cpu_s": round(time.process_time() - cpu_started, 1),
        "train_env_steps_per_s": round(model.num_timesteps / train_s, 2) if train_s else None,
        "eval_seeds": f"{_eval_seeds(config)[0]}..{_eval_seeds(config)[-1]}",
        "evaluation": evaluation,
        "selection": best.summary(_validation_seeds(config)) if config.validate_every else None,
        "files": ["curve.csv", "curve.png", "model.zip", "eval.json"] + (["tb/"] if _has_tensorboard() else []),
    }
    (out / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary


def _env_fns(config: TrainConfig) -> list[Callable[[], Any]]:
    """One factory per sub-env: sub-env ``i`` of ``n`` runs task ``i mod len(tasks)`` on seeds ``i, i + n, ...``."""
    from webarena_gym.wrappers.numeric import numeric_env_fn

    env_ids = config.env_ids
    n = config.n_envs or len(env_ids)
    return [
        numeric_env_fn(
            env_ids[i % len(env_ids)],
            seed_start=i,
            seed_stride=n,
            **config.numeric_options(env_ids[i % len(env_ids)]),
            **config.env_kwargs,
        )
        for i in range(n)
    ]


def _make_model(config: TrainConfig, vec: Any, out: Path) -> Any:
    kwargs: dict[str, Any] = {
        "n_steps": config.n_steps,
        "batch_size": config.batch_size,
        "n_epochs": config.n_epochs,
        "learning_rate": config.learning_rate,
        "ent_coef": config.ent_coef,
        "gamma": config.gamma,
        "seed": config.seed,
        "device": "cpu",
        "verbose": 0,
        "policy_kwargs": {"net_arch": list(config.net_arch)},
        "tensorboard_log": str(out / "tb") if _has_tensorboard() else None,
    }
    if config.algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO("MlpPolicy", vec, **kwargs)
    from stable_baselines3 import PPO

    return PPO("MlpPolicy", vec, **kwargs)


def _time_limit(seconds: float) -> Any:
    """A callback that ends training once ``seconds`` of wall time have passed since learning began."""
    from stable_baselines3.common.callbacks import BaseCallback

    class _TimeLimit(BaseCallback):
        def _on_training_start(self) -> None:
            self.deadline = time.monotonic() + seconds

        def _on_step(self) -> bool:
            return time.monotonic() < self.deadline

    return _TimeLimit()


def _every(steps: int, run: Callable[[], None]) -> Any:
    """A callback that calls ``run`` before a rollout once ``steps`` env steps have passed since its last call,
    so between two policy updates, never in the middle of one."""
    from stable_baselines3.common.callbacks import BaseCallback

    class _Every(BaseCallback):
        last = 0

        def _on_rollout_start(self) -> None:
            if self.num_timesteps - self.last >= steps:
                self.last = self.num_timesteps
                run()

        def _on_step(self) -> bool:
            return True

    return _Every()


class BestPolicy:
    """The validation rounds of one run and the policy parameters of the best: the highest mean success over
    the tasks, a tie going to the later round (it has trained longer)."""

    def __init__(self) -> None:
        self.rounds: list[dict[str, Any]] = []
        self.state: dict[str, Any] | None = None
        self.kept: dict[str, Any] | None = None

    def offer(self, env_steps: int, success: dict[str, float], state: Mapping[str, Any]) -> bool:
        """Record a round; keep a copy of ``state`` if it is the best so far. True when it was kept."""
        entry = {"env_steps": env_steps, "mean": float(np.mean(list(success.values()))), "success": dict(success)}
        self.rounds.append(entry)
        if self.kept is not None and entry["mean"] < self.kept["mean"]:
            return False
        self.kept, self.state = entry, copy.deepcopy(dict(state))
        return True

    def restore(self, module: Any) -> None:
        """Load the kept parameters into ``module`` (a torch module: the model's policy)."""
        if self.state is None:
            raise RuntimeError("no validation round was offered")
        module.load_state_dict(self.state)

    def summary(self, seeds: Sequence[int]) -> dict[str, Any]:
        return {
            "kept_env_steps": self.kept["env_steps"] if self.kept else None,
            "validation_seeds": f"{seeds[0]}..{seeds[-1]}",
            "rounds": self.rounds,
        }


def _validate(model: Any, config: TrainConfig, best: BestPolicy) -> None:
    """One validation round of the model as it stands, offered to ``best``."""
    policy, seeds = model_policy(model, config.algo), _validation_seeds(config)
    success = {env_id: evaluate(policy, env_id, config, seeds)["success_rate"] for env_id in config.env_ids}
    best.offer(int(model.num_timesteps), success, model.policy.state_dict())


def _has_tensorboard() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorboard") is not None


class CurveRecorder:
    """Writes one CSV row per finished training episode and logs per-task success to TensorBoard."""

    FIELDS = ("env_steps", "task", "reward", "length", "success")

    def __init__(self, path: Path, sub_env_tasks: list[str]) -> None:
        self.tasks = sub_env_tasks
        self._file = open(path, "w", newline="")  # noqa: SIM115 - closed by close()
        self._writer = csv.writer(self._file)
        self._writer.writerow(self.FIELDS)
        self._recent: dict[str, list[float]] = {}

    def callback(self) -> Any:
        from stable_baselines3.common.callbacks import BaseCallback

        recorder = self

        class _Callback(BaseCallback):
            def _on_step(self) -> bool:
                for i, info in enumerate(self.locals.get("infos") or ()):
                    episode = info.get("episode")
                    if episode is not None:
                        recorder.record(self.num_timesteps, recorder.tasks[i], float(episode["r"]), int(episode["l"]))
                        task = recorder.tasks[i].split("/", 1)[1]
                        self.logger.record(f"success/{task}", float(np.mean(recorder._recent[recorder.tasks[i]])))
                return True

        return _Callback()

    def record(self, steps: int, task: str, reward: float, length: int) -> None:
        success = reward >= 1.0
        self._writer.writerow((steps, task, reward, length, int(success)))
        self._file.flush()  # a long run can be watched (and survives a kill)
        window = self._recent.setdefault(task, [])
        window.append(float(success))
        del window[:-CURVE_WINDOW]

    def close(self) -> None:
        self._file.close()


def plot_curves(
    runs: Mapping[str, Path],
    png_path: Path,
    baselines: Mapping[str, Mapping[str, float]] | None = None,
    kept: Mapping[str, int] | None = None,
) -> None:
    """One panel per task: each run's training success (moving average over its last episodes of the task)
    against env steps, one line per run (e.g. per training seed); ``baselines`` (task -> name -> success
    rate, e.g. the rule's and random's on the held-out seeds) are drawn as dashed levels, and ``kept`` (run
    -> env step of the policy it reports, see :class:`BestPolicy`) as a dotted line in the run's colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = {label: list(csv.DictReader(open(path))) for label, path in runs.items()}
    tasks = sorted({row["task"] for rows in tables.values() for row in rows})
    columns = min(3, max(1, len(tasks)))
    n_rows = max(1, -(-len(tasks) // columns))
    fig, axes = plt.subplots(n_rows, columns, figsize=(4.2 * columns, 3.2 * n_rows), squeeze=False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        for label, rows in tables.items():
            mine = [r for r in rows if r["task"] == task]
            if not mine:
                continue
            steps = [int(r["env_steps"]) for r in mine]
            wins = np.array([float(r["success"]) for r in mine])
            window = min(CURVE_WINDOW, max(1, len(wins) // 5))
            smooth = np.convolve(wins, np.ones(window) / window, mode="valid")
            (line,) = ax.plot(steps[window - 1 :], smooth, label=label, linewidth=1.2)
            if kept and label in kept:
                ax.axvline(kept[label], color=line.get_color(), linestyle=":", linewidth=1)
        for (name, rate), style in zip(
            sorted((baselines or {}).get(task, {}).items()), ("--", ":", "-."), strict=False
        ):
            ax.axhline(rate, color="grey", linestyle=style, linewidth=1, label=f"{name} (held-out)")
        ax.set_title(task.split("/", 1)[-1], fontsize=9)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in axes.flat[len(tasks) :]:
        ax.set_visible(False)
    xlabel = "env steps (all sub-envs)" + ("; dotted: the policy each run kept" if kept else "")
    fig.supxlabel(xlabel, fontsize=9)
    fig.supylabel("training success (moving average)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)


# -- evaluation -------------------------------------------------------------------------------------

Policy = Callable[[np.ndarray, np.ndarray], int]


def _eval_seeds(config: TrainConfig) -> list[int]:
    from webarena_gym.wrappers.seeds import EVAL_SEED_BASE

    return list(range(EVAL_SEED_BASE, EVAL_SEED_BASE + config.eval_episodes))


def _validation_seeds(config: TrainConfig) -> list[int]:
    from webarena_gym.wrappers.seeds import VALIDATION_SEED_BASE

    return list(range(VALIDATION_SEED_BASE, VALIDATION_SEED_BASE + config.validation_episodes))


def model_policy(model: Any, algo: str = "maskable_ppo") -> Policy:
    """A trained (or loaded) SB3 model as a deterministic policy for :func:`evaluate`."""

    def act(vector: np.ndarray, mask: np.ndarray) -> int:
        if algo == "maskable_ppo":
            action, _ = model.predict(vector, deterministic=True, action_masks=mask)
        else:
            action, _ = model.predict(vector, deterministic=True)
        return int(action)

    return act


def random_policy(seed: int = 0) -> Policy:
    """Uniform over the actions the mask allows (the baseline a trained policy must beat)."""
    rng = np.random.default_rng(seed)

    def act(vector: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def rule_policy() -> Policy:
    """The rule a learner must beat, no learning: act on the slot whose name the goal quotes
    (``goal_quoted``), else on the one sharing most words with the goal (``goal_overlap``), the first in
    page order on a tie; a text field is filled (with the numeric env's ``type_text``: the features do not
    carry a text to type), anything else clicked. With no slot, the first action the mask allows."""
    from webarena_gym.wrappers.numeric import SLOT_FLAGS, slot_flags

    columns = [SLOT_FLAGS.index(flag) for flag in ("present", "typeable", "goal_overlap", "goal_quoted")]

    def act(vector: np.ndarray, mask: np.ndarray) -> int:
        k = (len(mask) - 1) // 2
        present, typeable, overlap, quoted = slot_flags(vector, k)[:, columns].T
        for slot in np.lexsort((np.arange(k), -overlap, -quoted)):  # the last key sorts first
            action = k + slot if typeable[slot] else slot
            if present[slot] and mask[action]:
                return int(action)
        return int(np.flatnonzero(mask)[0])

    return act


@dataclass
class Episode:
    """One held-out episode of a policy: the goal, the return, the numeric steps taken, and whether the
    mask ever offered a fill (the page had a text field)."""

    goal: str
    reward: float
    length: int
    could_type: bool

    @property
    def success(self) -> bool:
        return self.reward >= 1.0


def episodes(policy: Policy, env_id: str, config: TrainConfig, seeds: Sequence[int] | None = None) -> list[Episode]:
    """``policy``'s episodes on ``env_id``, one per seed (default: the held-out seeds)."""
    from webarena_gym.wrappers.numeric import make_numeric_env

    env = make_numeric_env(env_id, **config.numeric_options(env_id), **config.env_kwargs)
    done_episodes = []
    try:
        for seed in _eval_seeds(config) if seeds is None else seeds:
            vector, info = env.reset(seed=seed)
            goal, k = str(info.get("intent") or ""), (len(info["action_mask"]) - 1) // 2
            total, length, could_type, done = 0.0, 0, False, False
            while not done:
                could_type = could_type or bool(info["action_mask"][k : 2 * k].any())
                vector, reward, terminated, truncated, info = env.step(policy(vector, info["action_mask"]))
                total, length, done = total + float(reward), length + 1, terminated or truncated
            done_episodes.append(Episode(goal, total, length, could_type))
    finally:
        env.close()
    return done_episodes


def evaluate(policy: Policy, env_id: str, config: TrainConfig, seeds: Sequence[int] | None = None) -> dict[str, Any]:
    """Success rate and mean length of ``policy`` on ``env_id`` over ``seeds`` (default: the held-out ones)."""
    runs = episodes(policy, env_id, config, seeds)
    return {
        "episodes": len(runs),
        "success_rate": sum(e.success for e in runs) / len(runs),
        "mean_length": sum(e.length for e in runs) / len(runs),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webarena_gym.experiments.rl", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", required=True, help="comma-separated MiniWoB++ names or env ids")
    parser.add_argument("--out", required=True, help="directory for the curve, model and evaluation")
    parser.add_argument("--steps", type=int, default=TrainConfig.steps, help="training env steps (all sub-envs)")
    parser.add_argument("--n-envs", type=int, default=None, help="sub-envs (default: one per task)")
    parser.add_argument("--algo", choices=ALGOS, default=TrainConfig.algo)
    parser.add_argument("--vec", choices=VEC_KINDS, default=TrainConfig.vec)
    parser.add_argument("--k", type=int, default=TrainConfig.k, help="element slots")
    parser.add_argument("--n-steps", type=int, default=TrainConfig.n_steps, help="PPO rollout length per sub-env")
    parser.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    parser.add_argument("--n-epochs", type=int, default=TrainConfig.n_epochs)
    parser.add_argument("--learning-rate", type=float, default=TrainConfig.learning_rate)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds of training wall time at most")
    parser.add_argument("--max-episode-steps", type=int, default=None, help="default: the task's own budget")
    parser.add_argument("--eval-episodes", type=int, default=TrainConfig.eval_episodes, help="held-out seeds per task")
    parser.add_argument(
        "--validate-every", type=int, default=None, help="env steps between validation rounds; keep the best policy"
    )
    parser.add_argument(
        "--validation-episodes", type=int, default=TrainConfig.validation_episodes, help="validation seeds per task"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env-kwargs", type=json.loads, default={}, help="JSON, e.g. '{\"headless\": true}'")
    args = parser.parse_args(argv)
    config = TrainConfig(
        tasks=[t.strip() for t in args.tasks.split(",") if t.strip()],
        steps=args.steps,
        n_envs=args.n_envs,
        algo=args.algo,
        vec=args.vec,
        k=args.k,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        time_limit_s=args.time_limit,
        max_episode_steps=args.max_episode_steps,
        eval_episodes=args.eval_episodes,
        validate_every=args.validate_every,
        validation_episodes=args.validation_episodes,
        seed=args.seed,
        env_kwargs=args.env_kwargs,
    )
    summary = train(config, args.out)
    print(json.dumps({k: summary[k] for k in ("train_env_steps", "train_wall_s", "evaluation")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
