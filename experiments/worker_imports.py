"""What a study's process workers import before their first episode, loaded once by a fork server.

:class:`experiments.executors.ProcessExecutor` forks its workers from a server process that imported
this module. A worker then starts without seconds of imports (which two workers starting together
would otherwise fight over), and the pages of these modules are shared copy-on-write between the
workers instead of being loaded into each. ``gc.freeze()`` moves everything imported so far out of
the collector's reach, so collections in the workers do not write to (and so copy) those pages.
"""

import gc
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import

import litellm  # noqa: E402,F401 - every LLM policy calls through it
import playwright.sync_api  # noqa: E402,F401

import webarena_gym.experiments.compare  # noqa: E402,F401
import webarena_gym.experiments.rollout  # noqa: E402,F401
import webarena_gym.wrappers.presets  # noqa: E402,F401
from webarena_gym import envs  # noqa: E402,F401
from webarena_gym.llm.tokens import gpt2_encoding  # noqa: E402
from webarena_gym.policies.base import available_policies  # noqa: E402

available_policies()  # imports every policy module
gpt2_encoding()  # the reports' tokenizer (observation tokens per step), built once for every worker
gc.freeze()
