"""Published results a study's table can stand beside, each with where it comes from.

MiniWoB++: AgentLab's reproducibility journal (``reproducibility_journal.csv`` in the AgentLab repository)
records runs of its GenericAgent on BrowserGym's MiniWoB++ benchmark: the 125 tasks, 5 seeds each
(625 episodes), 10 steps per episode, BrowserGym's binary reward; success in % with its standard error.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedResult:
    agent: str
    success: float  # %
    stderr: float  # %
    source: str


MINIWOB_SOURCE = "AgentLab reproducibility journal, BrowserGym MiniWoB++ benchmark (125 tasks x 5 seeds, 10 steps)"
MINIWOB: tuple[PublishedResult, ...] = (
    PublishedResult("AgentLab GenericAgent, gpt-4o-2024-05-13", 65.6, 1.9, f"{MINIWOB_SOURCE}, runs of 2024-09-20/21"),
    PublishedResult(
        "AgentLab GenericAgent, gpt-4o-mini-2024-07-18",
        54.6,
        2.0,
        f"{MINIWOB_SOURCE}, run of 2024-09-20 (four runs: 53.9 to 56.3)",
    ),
)
