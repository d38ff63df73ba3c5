"""PPO that learns on MiniWoB++, and how fast the numeric envs step when vectorised.

Learning: one MaskablePPO policy (``experiments.rl``, MlpPolicy 64x64, CPU, 32 steps per sub-env and
update, 8 epochs, learning rate 1e-3) trains on five simple
MiniWoB++ tasks at once, seven sub-envs in worker processes (click-button and click-link, where a random
click is mostly wrong, get two each). After the stated budget of training env steps it is evaluated
deterministically on held-out seeds, and the random policy (uniform over the unmasked actions) runs on
the same seeds. Success = MiniWoB's reward within BrowserGym's 10-step budget. Targets (issue 19):
>= 90 % on click-test, focus-text and click-dialog; clearly above random on click-button and click-link.

Throughput: env steps per second of the numeric env on click-button with random unmasked actions (resets
included), for 1 env with the defaults (what LLM agents get) and with the numeric env's RL options
(``fast=True``: element actions skip Playwright's actionability waits, resets restart the task in the
page), and for Gymnasium's ``AsyncVectorEnv`` over 1, 2, 4 and 8 envs with the RL options (forkserver
workers, one browser each), beside the floor measured in the same run (:func:`floor`: Playwright driven
directly, a click, an accessibility-tree read and the reward read per step, in-page resets), so the ratio
is printed; for one env also the mean reset time and the CPU time per step of every process of the run
(the env's Python process, Playwright's driver, Chromium). On a 2-core machine more envs only help while
the browsers leave a core idle.

Survey (``python -m webarena_gym.benchmarks.rl --survey [--seeds N] [--tasks a,b]``, not part of the
runner's rows): the rule (``experiments.rl.rule_policy``: the slot the goal quotes, else the one sharing
most words with it) and random on every MiniWoB++ task, on held-out seeds with the RL options, printed
as JSON lines while it runs and then as a Markdown table: the table the learning tasks are chosen from.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

TASKS = ["click-button", "click-link", "click-test", "focus-text", "click-dialog"]
EASY = ("click-test", "focus-text", "click-dialog")
FULL = {"steps": 3000, "n_envs": 7, "eval_episodes": 30, "throughput_steps": 60}
QUICK = {"steps": 140, "n_envs": 7, "eval_episodes": 5, "throughput_steps": 8}


def learning_rows(budget: dict[str, int]) -> list[dict[str, Any]]:
    from webarena_gym.experiments.rl import TrainConfig, train

    config = TrainConfig(
        tasks=TASKS,
        steps=budget["steps"],
        n_envs=budget["n_envs"],
        n_steps=32,
        batch_size=56,
        n_epochs=8,
        learning_rate=1e-3,
        eval_episodes=budget["eval_episodes"],
    )
    with tempfile.TemporaryDirectory() as out:
        summary = train(config, out)
    minutes = summary["train_wall_s"] / 60
    budget_note = (
        f"after {summary['train_env_steps']} training env steps ({minutes:.1f} min wall, "
        f"{config.n_envs} sub-envs on this machine); {config.eval_episodes} held-out seeds"
    )
    rows = []
    for task in TASKS:
        result = summary["evaluation"][f"miniwob/{task}"]
        ppo, rnd = result["ppo"]["success_rate"], result["random"]["success_rate"]
        target = ">= 90" if task in EASY else f"> random ({100 * rnd:.0f})"
        rows.append(
            {
                "name": f"{task}: PPO success",
                "value": round(100 * ppo, 1),
                "unit": "%",
                "target": target,
                "note": f"random {100 * rnd:.0f} % on the same seeds; {budget_note}",
            }
        )
    rows.append(
        {
            "name": "training throughput",
            "value": summary["train_env_steps_per_s"],
            "unit": "env steps/s",
            "target": "",
            "note": f"{config.n_envs} sub-envs (SubprocVecEnv) while PPO learns",
        }
    )
    return rows


# One step of the floor: a click, the accessibility tree, the reward; an in-page reset restarts
# MiniWoB's episode on the page it is on (its own episode start, seeded) and lists what can be clicked.
_FLOOR_REWARD = "() => [WOB_RAW_REWARD_GLOBAL, WOB_DONE_GLOBAL]"
_FLOOR_RESET = """seed => {
  Math.seedrandom(seed);
  core.startEpisodeReal();
  return [...document.querySelectorAll('#area *')].map(e => e.getBoundingClientRect())
    .filter(r => r.width > 0 && r.height > 0).map(r => [r.x + r.width / 2, r.y + r.height / 2]);
}"""


def floor(steps: int, task: str = "click-button", max_steps: int = 10) -> float:
    """Steps/s of the least a numeric MiniWoB++ step needs, with Playwright driven directly on the same
    Chromium: a mouse click at a random element of the task's area, one accessibility-tree read, the
    reward read; an in-page reset (MiniWoB's own seeded episode start) when the page says done or after
    ``max_steps``. What the env adds on top of this is its own cost."""
    from webarena_gym.envs.browser import BrowserLease
    from webarena_gym.envs.miniwob import SITE
    from webarena_gym.envs.miniwob.host import MiniWoBSiteHost

    rng = np.random.default_rng(0)
    host, lease = MiniWoBSiteHost(), BrowserLease(True, 0, {})
    try:
        context = lease.ensure().new_context(viewport={"width": 332, "height": 214})
        page = context.new_page()
        page.goto(f"{host.urls()[SITE]}/miniwob/{task}.html")
        cdp = context.new_cdp_session(page)
        seed = 0
        targets, in_episode = page.evaluate(_FLOOR_RESET, seed), 0
        started = time.perf_counter()
        for _ in range(steps):
            x, y = targets[int(rng.integers(len(targets)))]
            page.mouse.click(x, y)
            cdp.send("Accessibility.getFullAXTree")
            _, done = page.evaluate(_FLOOR_REWARD)
            in_episode += 1
            if done or in_episode == max_steps:
                seed += 1
                targets, in_episode = page.evaluate(_FLOOR_RESET, seed), 0
        return steps / (time.perf_counter() - started)
    finally:
        lease.close()
        lease.release()
        host.close()


def throughput(
    n_envs: int, vector_steps: int, task: str = "miniwob/click-button", fast: bool = False, vector: bool = False
) -> dict[str, float]:
    """Env steps per second with random unmasked actions (resets included), after a warm-up reset; for
    one env in this process also the mean reset time and the CPU time per step of this process and its
    children (Playwright's driver, Chromium). ``fast``: the numeric env's RL options; ``vector``: under
    ``AsyncVectorEnv`` even for one env."""
    import gymnasium as gym

    from webarena_gym.benchmarks.support.procs import tree_cpu_s
    from webarena_gym.wrappers.numeric import numeric_env_fns

    rng = np.random.default_rng(0)
    fns = numeric_env_fns([task], n_envs, fast=fast)
    single = n_envs == 1 and not vector
    env: Any = fns[0]() if single else gym.vector.AsyncVectorEnv(fns, context="forkserver")
    resets: list[float] = []
    try:
        env.reset(seed=0)  # warm-up: launches the browser
        reset_at = time.perf_counter()
        _, info = env.reset(seed=1)
        resets.append(time.perf_counter() - reset_at)
        started, cpu = time.perf_counter(), sum(tree_cpu_s().values())
        for _ in range(vector_steps):
            if single:
                _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
                if terminated or truncated:
                    reset_at = time.perf_counter()
                    _, info = env.reset()
                    resets.append(time.perf_counter() - reset_at)
            else:
                actions = [int(rng.choice(np.flatnonzero(mask))) for mask in info["action_mask"]]
                _, _, _, _, info = env.step(np.array(actions))
        wall, cpu = time.perf_counter() - started, sum(tree_cpu_s().values()) - cpu
        figures = {"steps_per_s": n_envs * vector_steps / wall}
        if single:
            figures["cpu_ms_per_step"] = 1000 * cpu / vector_steps
            figures["reset_ms"] = 1000 * float(np.mean(resets))
        return figures
    finally:
        env.close()


def throughput_rows(steps: int) -> list[dict[str, Any]]:
    """The floor, one env with the defaults and with the RL options, and 1, 2, 4 and 8 vector envs with
    the RL options, in one run; each row with its ratio to the floor."""
    note = "numeric env on click-button, random unmasked actions, resets included"
    floor_rate = floor(steps)
    rows = [
        {
            "name": "floor steps/s",
            "value": round(floor_rate, 2),
            "unit": "steps/s",
            "target": "",
            "note": "Playwright directly, same Chromium: mouse click + AX-tree read + reward read, in-page reset",
        }
    ]
    cpu: dict[bool, float] = {}
    for fast in (False, True):
        figures = throughput(1, steps, fast=fast)
        cpu[fast] = figures["cpu_ms_per_step"]
        label = "1 env, " + ("RL options (fast=True)" if fast else "defaults")
        rate = figures["steps_per_s"]
        rows += [
            {
                "name": f"env steps/s, {label}",
                "value": round(rate, 2),
                "unit": "steps/s",
                "target": ">= 35, within 2x the floor" if fast else "",
                "note": f"{note}; floor / env = {floor_rate / rate:.2f}x",
            },
            {
                "name": f"reset, {label}",
                "value": round(figures["reset_ms"], 1),
                "unit": "ms",
                "target": "<= 25" if fast else "",
                "note": "mean of the resets of the 1-env run (one before the timed steps, then those within)",
            },
            {
                "name": f"CPU per step, {label}",
                "value": round(figures["cpu_ms_per_step"], 1),
                "unit": "ms",
                "target": "3x below the defaults'" if fast else "",
                "note": "CPU time of every process of the run: the env's Python process, Playwright's driver, Chromium"
                + (f"; defaults / RL options = {cpu[False] / cpu[True]:.2f}x" if fast else ""),
            },
        ]
    for n in (1, 2, 4, 8):
        rate = throughput(n, steps, fast=True, vector=True)["steps_per_s"]
        rows.append(
            {
                "name": f"env steps/s, {n} vector env{'s' if n > 1 else ''}, RL options",
                "value": round(rate, 2),
                "unit": "steps/s",
                "target": "",
                "note": f"{note}, AsyncVectorEnv (forkserver workers); floor / envs = {floor_rate / rate:.2f}x",
            }
        )
    return rows


def run(quick: bool = False) -> list[dict[str, Any]]:
    budget = QUICK if quick else FULL
    return learning_rows(budget) + throughput_rows(budget["throughput_steps"])


def survey(seeds: int = 10, tasks: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """One row per MiniWoB++ task (default: all): success of the rule and of random on ``seeds`` held-out
    seeds with the RL options (``fast=True``), their mean steps, whether a text field was offered, the
    fewest steps of any success (1: one action solves it), the first seed's goal and the seconds taken."""
    from webarena_gym.envs.miniwob import task_names
    from webarena_gym.experiments.rl import TrainConfig, episodes, random_policy, rule_policy

    for task in tasks or task_names():
        config = TrainConfig(tasks=[task], eval_episodes=seeds, env_kwargs={"fast": True, "keep_browser": True})
        started = time.monotonic()
        try:
            rule = episodes(rule_policy(), config.env_ids[0], config)
            rnd = episodes(random_policy(config.seed), config.env_ids[0], config)
        except Exception as error:  # one broken task must not end the survey
            yield {"task": task, "error": f"{type(error).__name__}: {error}"[:200]}
            continue
        wins = [e.length for e in rule + rnd if e.success]
        yield {
            "task": task,
            "rule": 100 * float(np.mean([e.success for e in rule])),
            "random": 100 * float(np.mean([e.success for e in rnd])),
            "rule_steps": float(np.mean([e.length for e in rule])),
            "random_steps": float(np.mean([e.length for e in rnd])),
            "typing": any(e.could_type for e in rule + rnd),
            "fewest_steps": min(wins) if wins else None,
            "goal": rule[0].goal,
            "seconds": round(time.monotonic() - started, 1),
        }


def survey_table(rows: list[dict[str, Any]]) -> str:
    """The survey as Markdown; multi-step is read from the fewest steps of a success ("?": none seen)."""
    lines = [
        "| task | rule % | random % | rule steps | random steps | text field "
        "| multi-step (fewest steps of a success) | goal (first seed) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['task']} | error | error |  |  |  |  | {row['error']} |")
            continue
        fewest = row["fewest_steps"]
        multi = "?" if fewest is None else ("no" if fewest == 1 else f"yes ({fewest})")
        goal = row["goal"].replace("|", "/").replace("\n", " ")
        lines.append(
            f"| {row['task']} | {row['rule']:.0f} | {row['random']:.0f} | {row['rule_steps']:.1f} | "
            f"{row['random_steps']:.1f} | {'yes' if row['typing'] else 'no'} | {multi} | {goal[:80]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webarena_gym.benchmarks.rl", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the runner's quick budget")
    parser.add_argument("--survey", action="store_true", help="rule and random on every MiniWoB++ task instead")
    parser.add_argument("--seeds", type=int, default=10, help="held-out seeds per task (survey)")
    parser.add_argument("--tasks", default="", help="comma-separated MiniWoB++ names (survey; default: all)")
    args = parser.parse_args(argv)
    if not args.survey:
        for row in run(quick=args.quick):
            print(json.dumps(row))
        return 0
    rows = []
    for row in survey(args.seeds, [t.strip() for t in args.tasks.split(",") if t.strip()] or None):
        print(json.dumps(row), flush=True)
        rows.append(row)
    print(survey_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
