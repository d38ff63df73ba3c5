"""Mutation score of one module against the fast unit tests that cover it (mutmut 3; docs/benchmarks.md).

mutmut names a mutant by the module path it derives from the file path, and the tests import
``webarena_gym.*``; the repository keeps the subpackages at its top instead. So each run works in a
staging folder, ``build/mutation/<module>/``, laid out as the installed package (``webarena_gym/policies``
...), with the tests and a copy of pyproject.toml that gains the ``[tool.mutmut]`` section for this run
only: the repository's own configuration never changes. mutmut puts its copy first on the import path, so
the tests import the mutated package and never the checkout.

    python scripts/mutation.py policies/plan_mcts/tree.py tests/test_policies_plan_mcts.py [--sample N]

``--sample N`` tests N mutants drawn at random (a fixed seed, so a re-run draws the same ones) instead
of all of them. Prints one JSON line: the module, mutants tried, killed, survived, score, and the
surviving mutants' names (``mutmut show NAME`` in the staging folder shows each diff).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("envs", "policies", "wrappers", "experiments", "llm", "benchmarks")
# Statuses of `mutmut results --all true`: what counts as killed (a test failed, or it hung past the
# timeout: a mutant that turns a loop endless is caught), as survived, and as not tried.
KILLED = {"killed", "timeout"}
SURVIVED = {"survived"}


def stage(module: str, tests: list[str]) -> Path:
    """A fresh staging folder for ``module`` (a repository path such as ``policies/plan_mcts/tree.py``)."""
    folder = ROOT / "build" / "mutation" / module.replace("/", "_").removesuffix(".py")
    shutil.rmtree(folder, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "webarena_gym", folder / "webarena_gym", ignore=ignore)
    for name in FOLDERS:
        shutil.copytree(ROOT / name, folder / "webarena_gym" / name, ignore=ignore)
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=ignore)
    target = f"webarena_gym/{module}"
    section = [
        "",
        "[tool.mutmut]",
        'source_paths = ["webarena_gym"]',
        f"only_mutate = {json.dumps([target])}",
        f"pytest_add_cli_args_test_selection = {json.dumps([*tests, '-m', 'not browser', '-p', 'no:cacheprovider'])}",
        "use_git_change_detection = false",
    ]
    text = (ROOT / "pyproject.toml").read_text()
    (folder / "pyproject.toml").write_text(text + "\n".join(section) + "\n")
    return folder


def mutmut(folder: Path, *args: str, timeout: float | None = None) -> str:
    exe = Path(sys.executable).parent / "mutmut"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [str(exe), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    return done.stdout


def statuses(folder: Path) -> dict[str, str]:
    """Every mutant of the run with its status (``not checked`` until tried)."""
    out: dict[str, str] = {}
    for line in mutmut(folder, "results", "--all", "true").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            out[name] = status
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="a module's repository path, e.g. policies/plan_mcts/tree.py")
    parser.add_argument("tests", nargs="+", help="the unit test files that cover it")
    parser.add_argument("--sample", type=int, default=0, help="test this many random mutants (0: all)")
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested in parallel")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the whole run")
    args = parser.parse_args()
    folder = stage(args.module, args.tests)
    children = ["--max-children", str(args.max_children)]
    if args.sample:
        mutmut(folder, "run", *children, "none-such-mutant", timeout=args.timeout)  # generate only
        names = sorted(statuses(folder))
        chosen = sorted(random.Random(30).sample(names, min(args.sample, len(names))))
        mutmut(folder, "run", *children, *chosen, timeout=args.timeout)
    else:
        mutmut(folder, "run", *children, timeout=args.timeout)
    found = statuses(folder)
    killed = sorted(n for n, s in found.items() if s in KILLED)
    survived = sorted(n for n, s in found.items() if s in SURVIVED)
    tried = len(killed) + len(survived)
    print(
        json.dumps(
            {
                "module": args.module,
                "mutants": len(found),
                "tried": tried,
                "killed": len(killed),
                "survived": len(survived),
                "score": round(len(killed) / tried, 3) if tried else None,
                "other": sorted({s for s in found.values()} - KILLED - SURVIVED),
                "surviving": survived,
            }
        )
    )


if __name__ == "__main__":
    main()
