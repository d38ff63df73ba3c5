"""The one computed part of the build: each top-level folder is a subpackage of ``webarena_gym``.

The repository keeps ``envs/``, ``policies/``, ``wrappers/``, ``experiments/``, ``llm/`` and
``benchmarks/`` at its top; installed, they are ``webarena_gym.envs`` and so on, and nothing else is put
on the import path (a user's own ``envs`` or ``llm`` package never meets ours). Everything else about
the build is in pyproject.toml.
"""

from setuptools import find_packages, setup

ROOT = "webarena_gym"
FOLDERS = ("envs", "policies", "wrappers", "experiments", "llm", "benchmarks")

packages = [ROOT]
package_dir = {ROOT: ROOT}
for folder in FOLDERS:
    package_dir[f"{ROOT}.{folder}"] = folder
    packages += [f"{ROOT}.{folder}", *(f"{ROOT}.{folder}.{sub}" for sub in find_packages(folder))]

setup(packages=packages, package_dir=package_dir)
