"""Running a stage's items: a thread pool of teacher calls with a progress bar, and batch top-ups.

Teacher calls wait on the network, so a stage runs ``concurrency`` items at once in threads (the stores
lock their appends). A provider that keeps failing (:class:`llm.LLMError`) or Ctrl-C stops the stage at
once: what was appended stays, and ``--resume`` carries on with the rest.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from webarena_gym.llm import LLMError

T = TypeVar("T")


class StageAborted(RuntimeError):
    """A stage stopped before its end (provider failure); everything written so far is kept."""


def derive_seed(seed: int, *parts: object) -> int:
    """A stable per-item sampling seed from the run's seed and the item's identity."""
    blob = ":".join(map(str, (seed, *parts))).encode()
    return int(hashlib.sha256(blob).hexdigest()[:8], 16)


def run_items(
    items: Sequence[T],
    fn: Callable[[T], None],
    *,
    concurrency: int,
    desc: str,
    progress: bool,
    postfix: Callable[[], str] | None = None,
) -> None:
    """``fn(item)`` for every item, ``concurrency`` at a time, with a progress bar."""
    if not items:
        return
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc=desc, unit="item", dynamic_ncols=True)
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    pending: set[Future[None]] = set()
    try:
        queue = list(items)
        while queue or pending:
            while queue and len(pending) < max(1, concurrency):
                pending.add(pool.submit(fn, queue.pop(0)))
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                error = future.exception()
                if isinstance(error, LLMError):
                    raise StageAborted(f"{desc}: the teacher failed ({error}); rerun with --resume") from error
                if error is not None:
                    raise error
                if bar is not None:
                    bar.update(1)
                    if postfix is not None:
                        bar.set_postfix_str(postfix(), refresh=False)
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def fill(
    target: int,
    per_batch: int,
    produced: Callable[[], int],
    finished: Callable[[], set[int]],
    run_batch: Callable[[int], None],
    **run: object,
) -> None:
    """Run batches 0, 1, 2 ... (skipping finished ones) until ``produced()`` reaches ``target``; batches
    that were rejected are replaced by later ones, up to twice the batches the target needs (plus 10)."""
    cap = 2 * math.ceil(target / per_batch) + 10
    while (have := produced()) < target:
        done = finished()
        todo = [i for i in range(cap) if i not in done][: math.ceil((target - have) / per_batch)]
        if not todo:
            return
        run_items(todo, run_batch, **run)  # type: ignore[arg-type]
