"""Shared test setup: offline litellm, one Chromium per process, and helpers every test area uses."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
