"""``python -m webarena_gym.benchmarks``: run the benchmarks (see :mod:`benchmarks.run`)."""

import sys

from webarena_gym.benchmarks.run import main

sys.exit(main())
