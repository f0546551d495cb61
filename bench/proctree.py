"""Memory of a whole process tree, sampled from /proc (Linux), for benchmarks of commands that fork.

A command's own ``ru_maxrss`` (what ``wait4`` reports) is the largest of its own peak and those
of the children it reaped, never their sum: an ingest with forked workers holds its own memory
and theirs at the same time. :class:`TreeSampler` polls a root process and its descendants every
``interval`` seconds from a thread and keeps, over the samples, the peak of the summed RSS and of
the summed PSS (``/proc/<pid>/smaps_rollup``: a page shared by n processes — the copy-on-write
image a fork inherits, a model mapped once — counts 1/n in each, so the sum counts it once), the
anonymous part of that PSS, and each process's own peak (``VmHWM``, read until it exits).

Sampling misses what rises and falls between two samples; each process's ``VmHWM`` does not.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

_KB = 1024.0


@dataclass
class Proc:
    """One process of the tree as last sampled."""

    pid: int
    ppid: int
    name: str
    hwm_kb: int = 0  # VmHWM: its own peak RSS
    first_s: float = 0.0
    last_s: float = 0.0


@dataclass
class TreeSampler:
    """Samples ``root`` and its descendants (``skip_root``: the root itself, a launcher, not counted)."""

    interval: float = 0.05
    skip_root: bool = True
    timeline: bool = False
    samples: int = 0
    peak_rss_kb: int = 0
    peak_pss_kb: int = 0
    peak_pss_anon_kb: int = 0
    peak_pss_at_s: float = 0.0
    peak_procs: int = 0
    procs: dict[int, Proc] = field(default_factory=dict)
    rows: list[tuple[float, ...]] = field(default_factory=list)  # (t, rss, pss, pss_anon, main pss, procs) per sample
    cpu_s: float = 0.0  # this sampler's own thread CPU time
    _root: int = 0
    _t0: float = 0.0
    _seen: dict[int, int] = field(default_factory=dict)  # pid -> ppid, for every pid of the listing
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self, root: int) -> None:
        """Start sampling ``root``'s tree in a thread."""
        self._root = root
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="proctree", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling (after the root was reaped, nothing is left to sample)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        c0 = time.thread_time()
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)
        self.cpu_s = time.thread_time() - c0

    def _tree(self) -> list[int]:
        """The root's descendants now (a full /proc listing; only new pids' ``stat`` is read)."""
        listing = {int(n) for n in os.listdir("/proc") if n.isdigit()}
        for pid in list(self._seen):
            if pid not in listing:
                del self._seen[pid]
        for pid in listing - self._seen.keys():
            ppid = _ppid(pid)
            if ppid is not None:
                self._seen[pid] = ppid
        members = {self._root}
        grew = True
        while grew:
            grew = False
            for pid, ppid in self._seen.items():
                if ppid in members and pid not in members:
                    members.add(pid)
                    grew = True
        if self.skip_root:
            members.discard(self._root)
        return sorted(members)

    def _sample(self) -> None:
        now = time.perf_counter() - self._t0
        rss = pss = anon = main = count = 0
        for pid in self._tree():
            status = _fields(f"/proc/{pid}/status", ("Name", "VmRSS", "VmHWM", "PPid"))
            rollup = _fields(f"/proc/{pid}/smaps_rollup", ("Pss", "Pss_Anon"))
            if status is None or rollup is None or "VmRSS" not in status:
                continue  # gone, or a zombie
            proc = self.procs.get(pid)
            if proc is None:
                proc = self.procs[pid] = Proc(pid, int(status["PPid"]), status["Name"], first_s=now)
            proc.hwm_kb = max(proc.hwm_kb, _kb(status["VmHWM"]))
            proc.last_s = now
            rss += _kb(status["VmRSS"])
            p = _kb(rollup["Pss"])
            pss += p
            anon += _kb(rollup.get("Pss_Anon", "0 kB"))
            if proc.ppid == self._root:
                main += p
            count += 1
        self.samples += 1
        self.peak_rss_kb = max(self.peak_rss_kb, rss)
        if pss > self.peak_pss_kb:
            self.peak_pss_kb, self.peak_pss_at_s = pss, now
        self.peak_pss_anon_kb = max(self.peak_pss_anon_kb, anon)
        self.peak_procs = max(self.peak_procs, count)
        if self.timeline:
            self.rows.append((round(now, 3), rss, pss, anon, main, count))

    def summary(self) -> dict[str, Any]:
        """Peaks in MB: the tree's summed RSS and PSS, the command's own and each kind of child's."""
        main = [p for p in self.procs.values() if p.ppid == self._root]
        kids = [p for p in self.procs.values() if p.ppid != self._root]
        by_name: dict[str, list[Proc]] = {}
        for p in kids:
            by_name.setdefault(p.name, []).append(p)
        return {
            "tree_peak_rss_mb": round(self.peak_rss_kb / _KB, 1),
            "tree_peak_pss_mb": round(self.peak_pss_kb / _KB, 1),
            "tree_peak_pss_anon_mb": round(self.peak_pss_anon_kb / _KB, 1),
            "tree_peak_pss_at_s": round(self.peak_pss_at_s, 2),
            "tree_peak_procs": self.peak_procs,
            "main_hwm_mb": round(max((p.hwm_kb for p in main), default=0) / _KB, 1),
            "children": {name: {"count": len(ps), "max_hwm_mb": round(max(p.hwm_kb for p in ps) / _KB, 1),
                                "sum_hwm_mb": round(sum(p.hwm_kb for p in ps) / _KB, 1)}
                         for name, ps in sorted(by_name.items())},
            "samples": self.samples, "sampler_cpu_s": round(self.cpu_s, 2),
        }


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split(None, 2)[1])


def _fields(path: str, wanted: tuple[str, ...]) -> dict[str, str] | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in wanted:
            out[key] = value.strip()
    return out


def _kb(value: str) -> int:
    return int(value.split()[0])
