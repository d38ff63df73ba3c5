"""The method pages' ``webarena-gym compare`` commands are command lines the CLI accepts as written
(a user copies them; one that needs a flag the page leaves out fails at once)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from webarena_gym.experiments import cli

METHODS = Path(__file__).resolve().parents[1] / "docs" / "methods"


def compare_commands(page: Path) -> list[str]:
    """The complete ``webarena-gym compare`` lines of the page's bash blocks (continuations joined,
    comments cut); a line with ``...`` is an abbreviation of an earlier one and is left out."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" # ", 1)[0].strip()
            if line.startswith("webarena-gym compare") and "..." not in line:
                commands.append(line)
    return commands


PAGES = sorted(METHODS.glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_method_pages_compare_commands_name_everything_they_need(page, monkeypatch):
    monkeypatch.delenv(cli.MODEL_ENV_VAR, raising=False)
    commands = compare_commands(page)
    assert commands, f"{page.name} shows no complete compare command"
    for command in commands:
        args = cli.build_parser().parse_args(shlex.split(command)[1:])
        assert cli._study_policies(args), command  # raises UsageError on a missing --model


def test_agentoccams_page_gives_the_sampling_defaults_the_code_uses():
    import inspect

    from webarena_gym.policies.agentoccam.policy import AgentOccamPolicy

    row = re.search(
        r"^\| `temperature`, `top_p`, `max_tokens` \| ([^|]+) \|", (METHODS / "agentoccam.md").read_text(), re.M
    )
    assert row, "agentoccam.md has no sampling row"
    documented = [v.strip() for v in row.group(1).split(",")]
    params = inspect.signature(AgentOccamPolicy).parameters
    assert documented == [str(params[k].default) for k in ("temperature", "top_p", "max_tokens")]
