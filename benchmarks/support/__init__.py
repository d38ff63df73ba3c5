"""Helpers that exist for tests and benchmarks only: the reference oracle, AX-tree capture, the process table."""
