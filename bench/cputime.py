"""CPU seconds of this process and of the children it waited for: the one clock the bench scripts
read on a shared machine (wall time moves with the load, CPU time much less)."""

from __future__ import annotations

import resource
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def cpu_seconds() -> float:
    """User + system seconds of this process and of its reaped children (git, ragit CLI runs)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(fn: Callable[[], T], digits: int | None = None) -> tuple[T, float, float]:
    """``(fn(), CPU seconds, wall seconds)``, rounded to ``digits`` when given."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    out = fn()
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    if digits is not None:
        cpu, wall = round(cpu, digits), round(wall, digits)
    return out, cpu, wall
