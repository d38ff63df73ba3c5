"""WebArena tasks as Gymnasium environments (see docs/design.md)."""
