"""Plan-and-Act's synthetic training-data pipeline (the paper's Section 4), on any WebArena-style tasks;
described for users in docs/methods/plan_and_act.md ("Training data").

Stage 1 (``stage1``) generates queries from seed tasks, filters them, rolls them out with any policy of
the project and keeps the successful episodes (the env's evaluator or an LLM outcome reward model);
Stage 2 (``stage2``) annotates each kept trajectory with a grounded plan, a replan per step and reasoning
traces; Stage 3 (``stage3``) expands the plans into synthetic query-plan pairs; Stage 4 (``stage4``)
classifies a validation study's failures and generates pairs aimed at them. ``pipeline.run`` runs them
(``webarena-gym synth run``), ``training.export_training`` writes planner, replanner and executor
training files (``webarena-gym synth export``). Each stage's output is its own JSONL file
(``context.FILES``, schemas in ``schemas``), resumable item by item; evaluated tasks never enter a seed
pool (``splits``).
"""

from webarena_gym.experiments.synth.context import SynthConfig
from webarena_gym.experiments.synth.pipeline import STAGES, run
from webarena_gym.experiments.synth.training import export_training

__all__ = ["STAGES", "SynthConfig", "export_training", "run"]
