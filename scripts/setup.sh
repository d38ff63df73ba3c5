#!/usr/bin/env bash
# One idempotent set-up for both README commands: a virtualenv with pinned dependencies and a Chromium.
# A second run with nothing changed returns in about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${WEBARENA_GYM_VENV:-.venv}"
PY="${PYTHON:-python3}"

have_browser() {
    [ -n "${WEBARENA_GYM_CHROMIUM:-}" ] && [ -x "${WEBARENA_GYM_CHROMIUM}" ] && return 0
    for b in chromium chromium-browser google-chrome google-chrome-stable; do
        command -v "$b" >/dev/null 2>&1 && return 0
    done
    return 1
}

# Headless runs use Chromium's headless shell when it is installed (a third less CPU and memory than
# the full browser); the full browser stays for headless=False.
have_headless_shell() {
    [ -n "${WEBARENA_GYM_CHROMIUM:-}" ] && return 0
    for b in chromium-headless-shell chrome-headless-shell; do
        command -v "$b" >/dev/null 2>&1 && return 0
    done
    return 1
}

packages=""
have_browser || packages="chromium"
have_headless_shell || packages="$packages chromium-headless-shell"
if [ -n "$packages" ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing Debian's$packages" >&2
        apt-get update -qq >/dev/null
        # shellcheck disable=SC2086 # word splitting of the package list is intended
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null || {
            # The shell is an optimisation; only a missing browser is fatal.
            have_browser || { echo "setup: could not install chromium" >&2; exit 1; }
            echo "setup: chromium-headless-shell not installed; headless runs use the full browser" >&2
        }
    elif ! have_browser; then
        echo "setup: no system Chromium found; will try Playwright's own download after the venv exists" >&2
        NEED_PW_BROWSER=1
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi

# Reinstall only when the dependency pins or the package metadata changed.
stamp="$VENV/.webarena-gym-stamp"
want="$(cat pyproject.toml setup.py constraints.txt | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: installing pinned dependencies into $VENV" >&2
    "$VENV/bin/pip" install -q --upgrade pip >/dev/null
    # CPU torch first, or stable-baselines3 pulls the CUDA build (gigabytes).
    "$VENV/bin/pip" install -q "torch==2.13.0"
    "$VENV/bin/pip" install -q -c constraints.txt -e ".[all]"
    echo "$want" > "$stamp"
fi

if [ "${NEED_PW_BROWSER:-0}" = "1" ]; then
    "$VENV/bin/python" -m playwright install chromium || {
        echo "setup: no Chromium available. Install one and/or set WEBARENA_GYM_CHROMIUM=/path/to/chrome" >&2
        exit 1
    }
fi

# mypy cannot follow the build's folder mapping (setup.py), so it reads the package through links laid
# out as the installed package is: build/typecheck/webarena_gym/envs -> envs, and so on.
tree=build/typecheck/webarena_gym
mkdir -p "$tree"
ln -sfn ../../../webarena_gym/__init__.py "$tree/__init__.py"
for folder in envs policies wrappers experiments llm benchmarks; do
    ln -sfn "../../../$folder" "$tree/$folder"
done
