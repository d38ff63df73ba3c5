"""``python -m benchmarks``: run the benchmarks (see :mod:`benchmarks.run`)."""

import sys

from benchmarks.run import main

sys.exit(main())
