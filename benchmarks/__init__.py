"""The project's benchmarks (``make bench``, figures in docs/benchmarks.md) and the helpers that tests and
benchmarks share (:mod:`benchmarks.support`). Nothing here is part of the harness users import."""
