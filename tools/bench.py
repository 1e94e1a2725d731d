#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: run the QEMU measurement matrix (make bench) and write results.json and report.md.
"""Usage: bench.py [--quick] [--runs N] [--jobs N] [--no-host] [--out DIR] [--machine PROPS]
                [--observer SO] [--matrices abcde] [--qemu Q ...]

Boots the production image (build/memaccept.efi) once per cell, every cell with
fake_unaccepted_start=512M, so that memory above 512 MiB counts as unaccepted (platform sim)
and every size, 1G included, has unaccepted memory:

  (a) time to ready, workload=none: lazy at 1G, 4G, 64G, 256G, 8T and eager at 1G, 4G,
      each booted 11 times, one boot at a time and in rounds over the sizes (a second
      guest on a 2-core host would share the cores and add its noise to a 20-30 ms
      figure); median, min, max of
      `ready` and each lazy size against 1G lazy (the goal: the largest lazy size, 8T,
      within 10% of 1G lazy; and the median time to ready at most 11 ms at 1G and 256G).
      8T runs with -cpu max,phys-bits=46 (a 64 TiB physical address space, which OVMF
      needs for 8 TiB of RAM; the other sizes keep QEMU's default CPU model).
  (b) policies lazy, eager, ahead (accept_ahead=64M) x 1G, 4G, 16G, 64G with
      workload=bandwidth:128M,touch:auto, one boot each, and eager once more with guest
      RAM backed by the host before boot (prealloc); each policy's acceptance throughput
      against the first-write bandwidth of the same boot under the same host conditions
      (goal: at least 0.8; lazy: the bandwidth step's 64 paired units; eager: its last
      runs against the first write right after ready, judged on the backed boots;
      report.Run.same_time). Eager's accepts all come before ready and its first write
      after, so it cannot be paired in time: on first-touch RAM the two sides then meet
      the host backing fresh memory at different rates (this host, itself a VM, backed
      fresh memory at 200 MiB/s to over 900 MiB/s from one boot to the next), and those
      boots are shown beside, not judged. The backed boots run one at a time.
  (c) eager at 8G on 1 and 2 vCPUs, alternating, 5 boots each with guest RAM backed by the
      host before boot (prealloc), and 1 each backed on first touch (goal: 2 vCPUs ready
      in at most 0.625 of the 1-vCPU time).
  (d) lazy and background at 4G on 2 vCPUs under workload=alloc2m:1G,touch:auto, 9 boots
      each, alternating (goals: background ready within 10% of lazy, everything accepted
      in the end, allocation latency lower than lazy's: touch p99 and p999, alloc2m p99).

  (e) instructions: lazy at 1G and 8T, workload=touch:900M, three boots each under the instruction
      observer (build/observer.so, --observer), which counts the boot vCPU's guest
      instructions per boot phase (markers at each phase's end, arch/x86/observer.h);
      goal: 8T within 2% of 1G in instructions to ready; and per accepted 2 MiB unit, the
      instructions of the accept path (mm/accept.c and kernel/memory.c) outside the
      platform's call (the touch after ready accepts units). Both run -cpu max,phys-bits=46, so
      that the only difference is the RAM (the CPU model changes the count: 1 GiB pages
      mean fewer page-table entries). Separate boots, because the plugin's per-block
      callback slows TCG and would distort (a)'s times. The kernel's phases repeat to the
      instruction, the firmware's part (efi_main to ExitBootServices) by a few thousand,
      so the goal is judged on the medians. Without --observer they are skipped.

Eager acceptance writes every byte of guest memory, so an eager guest costs the host its
full size: eager cells above 16G are never booted (marked skipped), and boots run in
parallel only while their estimated host memory fits in what the host has free.
Guests are reserve=off, so a lazy 256G guest costs the host only what it touches.

--machine adds q35 properties to every boot, for example max-ram-below-4g=1G: QEMU then
puts 1 GiB of RAM below 4 GiB instead of 2 GiB, which moves OVMF's own allocations (taken
from the top of low RAM) from just below 2 GiB to just below 1 GiB.

Writes DIR/logs/NAME.log (+ NAME.meta.json, read by report.py), DIR/results.json,
DIR/report.md and the PNGs, and runs the host benchmarks (make bench-host-bitmap
bench-host-palloc) unless --no-host.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform as pyplatform
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import memaccept_log as ml  # noqa: E402
import report  # noqa: E402
import runqemu  # noqa: E402
import hostlaunch  # noqa: E402

GIB = ml.GIB
FAKE = "fake_unaccepted_start=512M"
POLICY_WORKLOAD = "workload=bandwidth:128M,touch:auto"
POLICY_ARGS = {"lazy": "accept_memory=lazy", "eager": "accept_memory=eager",
               "ahead": "accept_memory=ahead accept_ahead=64M",
               "background": "accept_memory=background"}
# More than one vCPU: parallel eager at this size on 1 and 2 vCPUs, and background
# against lazy on 2 vCPUs at BACKGROUND_MEM under BACKGROUND_WORKLOAD.
SMP_EAGER_MEM = "8G"
# Backed eager boots per vCPU count, the order of 1 and 2 vCPUs swapped every round so
# that a host drifting through the run favours neither: one such boot spread over
# 11.5-13.3 s (1 vCPU) and 7.0-9.4 s (2 vCPUs) in five alternating rounds by hand, where
# three rounds in a fixed order had given a share of 0.700 against 0.581 by hand.
SMP_EAGER_RUNS = 5
BACKGROUND_MEM = "4G"
# alloc2m first: past the free memory every 2 MiB allocation needs an accepted unit, so
# its tail shows acceptance; touch:auto's 4 KiB allocations need one in about a thousand,
# which p99 cannot see (p999 can).
BACKGROUND_WORKLOAD = "workload=alloc2m:1G,touch:auto"
# Boots of each policy in (d): touch p99 of one boot varies by about +-30% on a shared
# 2-core host, more than the difference between the policies' fast paths, and `ready`
# on 2 vCPUs by about +-15% (22-31 ms in ten alternating boots of either policy, steps
# before ExitBootServices included, where both policies run the same code), more than
# the 10% the goal allows: 9 boots each, so that one slow boot moves neither median.
BACKGROUND_RUNS = 9
# Eager on 2 vCPUs ready in at most this share of the 1-vCPU time (a 1.6x speedup);
# background ready within GOAL_RATIO of lazy's.
GOAL_SMP_SHARE = 0.625
# The project's rule for this host: eager writes all guest memory, never above 16G.
EAGER_MAX = 16 * GIB
# Left free for the host itself when deciding which boots may run side by side.
HOST_MARGIN = 2 * GIB
HOST_TARGETS = ("bench-host-bitmap", "bench-host-palloc")
GOAL_RATIO = 1.10
# Time to ready at 1G and at the largest lazy size, and acceptance against first write.
GOAL_READY_US = 11000
GOAL_FIRST_WRITE = 0.8
# Matrix (e): instructions to ready at the largest lazy size within this of 1G's.
GOAL_INSN_RATIO = 1.02
INSN_SIZES = ("1G", "8T")
# Boots per size: the firmware's share of a boot (efi_main to ExitBootServices) varies by a
# few thousand instructions from boot to boot, so the goal is judged on medians.
INSN_RUNS = 3
INSN_CPU = ["-cpu", "max,phys-bits=46"]
# After ready (so that it changes nothing before it): past the free memory, so that units
# are accepted and the kernel's accept path is counted per unit. With -cpu max at 1G,
# about 830 MiB are free at ready (OVMF takes most of the rest for its page tables of a
# 64 TiB address space, so only 218 MiB stay unaccepted): touch:640M accepted nothing.
INSN_WORKLOAD = "workload=touch:900M"
UNIT = 2 << 20
# A matrix (a) boot whose efi_main_to_ebs phase took more than this times the median of
# all of matrix (a)'s lazy boots ran while the whole host was slower: that phase does not
# grow with RAM, and in such boots every phase, firmware included, is 1.4-2x slower.
SLOWED_HOST = 1.3


class Cell:
    """One boot of the matrix."""

    def __init__(self, matrix, policy, mem, workload, run=1, runs=1, smp=1, prealloc=False,
                 observer=False):
        self.matrix, self.policy, self.mem, self.run = matrix, policy, mem, run
        self.observer = observer
        self.instructions = None
        self.smp, self.prealloc = smp, prealloc
        self.mem_bytes = ml.parse_size(mem)
        self.args = " ".join([FAKE, POLICY_ARGS[policy], workload])
        self.workload = workload
        # Above 1 TiB: a physical address space that holds the RAM (OVMF takes its width
        # from CPUID 0x80000008); -cpu qemu64,phys-bits=46 did not boot 8T here.
        self.qemu_extra = ["-cpu", "max,phys-bits=46"] if self.mem_bytes > 1024 * GIB else []
        if observer:
            self.qemu_extra = list(INSN_CPU)
        self.name = "%s-%s-%s" % (matrix, policy, mem) + \
            ("-smp%d" % smp if smp > 1 or matrix == "c" else "") + \
            ("-backed" if prealloc else "") + ("-r%d" % run if runs > 1 else "")
        self.status = "pending"   # ok, failed, timeout, error, skipped
        self.reason = ""
        self.seconds = None
        self.guest_code = None
        self.log = None
        self.boot = None

    @property
    def host_bytes(self):
        """What the boot may cost the host: eager touches all of it; lazy and ahead touch
        the memory below 1G, what the workload takes, and QEMU's own."""
        if self.policy in ("eager", "background") or self.prealloc:
            return self.mem_bytes + GIB // 2
        if self.workload == "workload=none":
            return min(self.mem_bytes, GIB) + GIB // 2
        return min(self.mem_bytes, 2 * GIB) + GIB // 2

    @property
    def est_seconds(self):
        """Rough TCG durations on this kind of host, to start the long boots first."""
        g = self.mem_bytes / GIB
        # prealloc: the host backs all of it first (about 4 s per GiB here).
        backing = 4 * g if self.prealloc else 0
        if self.workload == "workload=none":
            # OVMF's own set-up grows with the address space: 8T lazy takes about 40 s.
            return 8 + g / 256 + backing + (3 * g if self.policy == "eager" else 0)
        return 12 + backing + (6 * g if self.policy == "eager" else 0)

    def timeout(self, base):
        return base + (30 * self.mem_bytes // GIB if self.policy == "eager" else 0)

    def to_json(self):
        b = self.boot
        d = {"name": self.name, "matrix": self.matrix, "policy": self.policy, "mem": self.mem,
             "mem_bytes": self.mem_bytes, "args": self.args, "run": self.run,
             "smp": self.smp, "prealloc": self.prealloc,
             "status": self.status, "reason": self.reason, "seconds": self.seconds,
             "guest_code": self.guest_code, "log": self.log}
        if b is not None and not b.fatal:
            d.update(ready_us=b.ready_us, platform=b.platform, boot_phases=_strip(b.boot_phases),
                     timing=_strip(b.timing), summary=_strip(b.summary),
                     workloads=[_strip(w) for w in b.workloads],
                     log_problems=b.messages)
        if self.instructions is not None:
            d["instructions"] = _strip(self.instructions)
        return d


def _strip(ev):
    return {k: v for k, v in ev.items() if k != "event"} if ev else None


def matrix_cells(quick, runs=None):
    """The cells to boot and those skipped (eager above EAGER_MAX). runs: boots per
    time-to-ready cell (default 11, --quick 1)."""
    cells, skipped = [], []
    if quick:
        ready = [("lazy", m) for m in ("1G", "256G")] + [("eager", "1G")]
        runs = runs or 1
        pol_sizes = ("1G", "4G")
    else:
        ready = [("lazy", m) for m in ("1G", "4G", "64G", "256G", "8T")] + \
                [("eager", m) for m in ("1G", "4G")]
        runs = runs or 11
        pol_sizes = ("1G", "4G", "16G", "64G")
    for policy, mem in ready:
        for r in range(1, runs + 1):
            cells.append(Cell("a", policy, mem, "workload=none", r, runs))
    cells += smp_cells(quick)
    cells += [Cell("e", "lazy", m, INSN_WORKLOAD, r, INSN_RUNS, observer=True)
              for r in range(1, INSN_RUNS + 1) for m in INSN_SIZES]
    for mem in pol_sizes:
        for policy in ("lazy", "eager", "ahead"):
            c = Cell("b", policy, mem, POLICY_WORKLOAD)
            if policy == "eager" and c.mem_bytes > EAGER_MAX:
                c.status = "skipped"
                c.reason = ("eager writes all guest memory: %s needs %s of host memory "
                            "(this host: %s); eager runs only up to %s here" %
                            (mem, mem, ml.format_size(host_mem_total()) if host_mem_total()
                             else "?", ml.format_size(EAGER_MAX)))
                skipped.append(c)
            else:
                cells.append(c)
                if policy == "eager":
                    cells.append(Cell("b", policy, mem, POLICY_WORKLOAD, prealloc=True))
    return cells, skipped


def smp_cells(quick):
    """(c) eager at SMP_EAGER_MEM on 1 and 2 vCPUs, guest RAM backed by the host before
    boot (several boots each), and once each with RAM backed on first touch as usual;
    (d) lazy and background at BACKGROUND_MEM on 2 vCPUs under BACKGROUND_WORKLOAD."""
    runs = 1 if quick else SMP_EAGER_RUNS
    cells = []
    for r in range(1, runs + 1):
        for smp in ((1, 2) if r % 2 else (2, 1)):
            cells.append(Cell("c", "eager", SMP_EAGER_MEM, "workload=none", r, runs, smp,
                              prealloc=True))
    for smp in (1, 2):
        cells.append(Cell("c", "eager", SMP_EAGER_MEM, "workload=none", smp=smp))
    runs = 1 if quick else BACKGROUND_RUNS
    for r in range(1, runs + 1):
        for policy in ("lazy", "background"):
            cells.append(Cell("d", policy, BACKGROUND_MEM, BACKGROUND_WORKLOAD, r, runs, smp=2))
    return cells


# ---------------------------------------------------------------- host
def _meminfo(key):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def host_mem_total():
    t = _meminfo("MemTotal")
    # Round to whole GiB for the report (the kernel keeps some for itself).
    return (t + GIB // 2) // GIB * GIB if t else None


def other_qemus():
    """QEMU processes already running (other people's tests): they share the host's cores
    with the bench's guests and make its timings slower and noisier."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    n += f.read().startswith("qemu-system")
            except OSError:
                pass
    return n


def _loadavg():
    try:
        return "%.2f" % os.getloadavg()[0]
    except OSError:
        return "?"


def host_info(o):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    try:
        qv = subprocess.run([o.qemu, "--version"], capture_output=True, text=True,
                            timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        qv = "?"
    try:
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        git = "?"
    return {"cpu": cpu, "cpus": os.cpu_count(), "mem_total_bytes": _meminfo("MemTotal"),
            "mem_available_bytes": _meminfo("MemAvailable"), "kernel": pyplatform.release(),
            "qemu": qv, "machine": o.machine, "ovmf_code": o.ovmf_code, "image": o.efi,
            "git": git}


# ---------------------------------------------------------------- running
def boot_cell(cell, o):
    """Boots one cell, writes its log and sidecar; never raises."""
    log = os.path.join(o.out, "logs", cell.name + ".log")
    cell.log = os.path.relpath(log, o.out)
    start = time.monotonic()
    try:
        extra = (["-machine", o.machine] if o.machine else []) + cell.qemu_extra
        # On a real TDX or SEV-SNP host (--cc-host) the launcher builds the KVM command line.
        cbit = hostlaunch.host_cbitpos() or hostlaunch.DEFAULT_CBITPOS
        command = (lambda esp: hostlaunch.command(o.cc_host, esp, cell.mem, cell.smp, o.bios,
                                                  o.qemu, cbitpos=cbit,
                                                  mem_bytes=cell.mem_bytes)) \
            if o.cc_host else None
        res = runqemu.run(o.efi, cell.args, cell.mem, cell.smp,
                          cell.timeout(o.timeout) * (4 if cell.observer else 1), None,
                          o.qemu, o.ovmf_code, o.ovmf_vars, extra=extra, prealloc=cell.prealloc,
                          bios=o.bios, command=command,
                          observer=o.observer if cell.observer else None)
        with open(log, "w") as f:
            f.write(res.output)
        cell.seconds = round(res.seconds, 1)
        cell.guest_code = res.guest_code
        meta = {"name": cell.name, "matrix": cell.matrix, "mem": cell.mem,
                "mem_bytes": cell.mem_bytes, "args": cell.args, "smp": cell.smp,
                "prealloc": cell.prealloc,
                "command": res.command, "qemu_rc": res.qemu_rc, "guest_code": res.guest_code,
                "timed_out": res.timed_out, "seconds": cell.seconds}
        with open(ml.sidecar_path(log), "w") as f:
            json.dump(meta, f, indent=1)
        cell.boot = ml.read_boot(log)
        if cell.observer:
            cell.instructions = ml.first(ml.parse_events(res.output)[0], "instructions")
        if res.timed_out:
            cell.status, cell.reason = "timeout", res.describe()
        elif res.guest_code != 0:
            cell.status, cell.reason = "failed", res.describe()
        elif cell.boot.fatal:
            cell.status, cell.reason = "failed", "log unusable: " + cell.boot.fatal
        elif cell.observer and (cell.instructions is None or cell.instructions.get("to_ready") is None):
            cell.status, cell.reason = "failed", "no instruction count to ready from the observer"
        else:
            cell.status = "ok"
    except Exception as e:  # QEMU missing, disk full: this cell fails, the bench goes on
        cell.status, cell.reason = "error", "%s: %s" % (type(e).__name__, e)
        cell.seconds = round(time.monotonic() - start, 1)
    return cell


def ready_order(cells, seed=1):
    """Matrix (a) in rounds, every cell once per round, in a shuffled order each round
    (fixed seed): in one fixed order each cell always follows the same neighbour, and
    a boot right after eager 4G (which made the host back and then free 4 GiB) would
    always be the same cell's."""
    rng = random.Random(seed)
    rounds = {}
    for c in cells:
        if c.matrix == "a":
            rounds.setdefault(c.run, []).append(c)
    out = []
    for r in sorted(rounds):
        rng.shuffle(rounds[r])
        out += rounds[r]
    return out


def run_cells(cells, o, t0, jobs, longest_first=True):
    """Runs the cells jobs at a time (longest first unless told to keep their order), as
    long as their host memory fits. Only the boots run in the pool's threads: the progress
    count and the lines printed are the calling thread's alone."""
    avail = _meminfo("MemAvailable") or 8 * GIB
    budget = max(avail - HOST_MARGIN, GIB)
    todo = []
    for c in cells:
        if c.host_bytes > budget:
            c.status = "skipped"
            c.reason = "needs about %s of host memory, %s available" % (
                ml.format_size(c.host_bytes), ml.format_size(avail // GIB * GIB))
        else:
            todo.append(c)
    if longest_first:
        todo.sort(key=lambda c: -c.est_seconds)
    total, done = len(todo), 0
    print("bench: %d boots, up to %d at a time (host memory budget %.1f GiB)" %
          (total, jobs, budget / GIB), flush=True)
    running = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        while todo or running:
            while todo and len(running) < jobs:
                used = sum(c.host_bytes for c in running.values())
                fit = next((c for c in todo if not running or used + c.host_bytes <= budget), None)
                if fit is None:
                    break
                todo.remove(fit)
                running[pool.submit(boot_cell, fit, o)] = fit
            finished, _ = concurrent.futures.wait(running,
                                                  return_when=concurrent.futures.FIRST_COMPLETED)
            for f in finished:
                c = running.pop(f)
                done += 1
                us = c.boot.ready_us if c.boot is not None else None
                print("[%2d/%d %4.0fs] %-18s %-7s %s(%.1f s)%s" % (
                    done, total, time.monotonic() - t0, c.name, c.status,
                    "ready %.1f ms " % (us / 1000.0) if us is not None else "",
                    c.seconds or 0, ": " + c.reason if c.reason else ""), flush=True)


def host_benchmarks(o):
    """Runs the host benchmark targets (tests/bench/*.mk); collects their {"bench": ...}
    lines."""
    out = {"targets": list(HOST_TARGETS)}
    print("bench: host benchmarks: make -s %s" % " ".join(out["targets"]), flush=True)
    start = time.monotonic()
    try:
        p = subprocess.run(["make", "-s"] + out["targets"], cwd=ROOT, capture_output=True,
                           text=True, timeout=o.host_timeout)
        text, rc = p.stdout, p.returncode
        err = p.stderr
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        rc, err = None, "timed out after %d s" % o.host_timeout
    except OSError as e:
        text, rc, err = "", None, str(e)
    out["seconds"] = round(time.monotonic() - start, 1)
    out["results"], bad_lines = ml.parse_bench_lines(text)
    bad = len(bad_lines)
    out["status"] = "ok" if rc == 0 else "failed"
    notes = []
    if rc != 0:
        notes.append("make exited %s: %s" % (rc, (err or "").strip().splitlines()[-1:] or ""))
    if bad:
        notes.append("%d malformed {\"bench\": ...} line(s) skipped" % bad)
    out["note"] = "; ".join(str(n) for n in notes)
    print("bench: host benchmarks %s: %d result line(s) (%.1f s)%s" % (
        out["status"], len(out["results"]), out["seconds"],
        "; " + out["note"] if out["note"] else ""), flush=True)
    return out


# ---------------------------------------------------------------- analysis
def ratio_interval(num, den, resamples=2000, seed=1):
    """95% bootstrap interval of median(num) / median(den): resample each group's boots
    with replacement. Fixed seed, so a report can be regenerated exactly."""
    if len(num) < 2 or len(den) < 2:
        return None
    rng = random.Random(seed)
    rs = sorted(statistics.median(rng.choices(num, k=len(num))) /
                statistics.median(rng.choices(den, k=len(den))) for _ in range(resamples))
    return [rs[int(0.025 * resamples)], rs[int(0.975 * resamples) - 1]]


def edge_accept_us(boot):
    """Time the boot spent accepting the partial units at range edges, when every accept
    of the boot was one of those (workload=none, not eager); else None."""
    s = boot.summary or {}
    paths = s.get("accepted_by_path") or {}
    if not isinstance(s.get("accept_ns_total"), int) or \
            any(v for k, v in paths.items() if k != "boot_edge"):
        return None
    return s["accept_ns_total"] / 1000.0


def slowed_host(cells):
    """The names of matrix (a)'s boots that ran while the host was slower (SLOWED_HOST),
    and the threshold in us; ([], None) when no lazy boot reports efi_main_to_ebs."""
    pre = lambda c: (c.boot.boot_phases or {}).get("efi_main_to_ebs")  # noqa
    ok = [c for c in cells if c.matrix == "a" and c.status == "ok" and c.boot is not None
          and c.boot.ready_us is not None]
    base = [pre(c) for c in ok if c.policy == "lazy" and pre(c) is not None]
    if not base:
        return [], None
    limit = SLOWED_HOST * statistics.median(base)
    return [c.name for c in ok if pre(c) is not None and pre(c) > limit], limit


def ready_matrix(cells):
    """Per (policy, RAM) of matrix (a): the ready times and the median boot phases."""
    groups = {}
    for c in cells:
        if c.matrix == "a":
            groups.setdefault((c.policy, c.mem_bytes, c.mem), []).append(c)
    slow, limit = slowed_host(cells)
    base = None
    rows = []
    for (policy, mb, mem), cs in sorted(groups.items(),
                                        key=lambda kv: (report.POLICY_ORDER.get(kv[0][0], 9),
                                                        kv[0][1])):
        ok = [c for c in cs if c.status == "ok" and c.boot.ready_us is not None]
        us = [c.boot.ready_us for c in ok]
        # ready minus efi_main_to_ebs: the part the kernel owns, without the firmware's.
        kern = [c.boot.ready_us - c.boot.boot_phases["efi_main_to_ebs"] for c in ok
                if "efi_main_to_ebs" in (c.boot.boot_phases or {})]
        phases = {}
        for c in ok:
            for k, v in (c.boot.boot_phases or {}).items():
                if k != "event":
                    phases.setdefault(k, []).append(v)
        edges = [e for e in (edge_accept_us(c.boot) for c in ok) if e is not None]
        fw = [c.boot.boot_steps["firmware_us"] for c in ok
              if "firmware_us" in (c.boot.boot_steps or {})]
        row = {"policy": policy, "mem": mem, "mem_bytes": mb, "runs": len(cs),
               "ok_runs": len(ok), "ready_us": us,
               # The boots that did not run on a slowed host (slowed_host).
               "steady_us": [c.boot.ready_us for c in ok if c.name not in slow],
               "median_us": statistics.median(us) if us else None,
               "min_us": min(us) if us else None, "max_us": max(us) if us else None,
               "kernel_median_us": statistics.median(kern) if kern else None,
               # efi_main to EBS, the firmware's own calls only (reading the command line
               # file, GetMemoryMap, ExitBootServices): boot_steps.firmware_us.
               "firmware_median_us": statistics.median(fw) if fw else None,
               "phases_median_us": {k: statistics.median(v) for k, v in phases.items()},
               # Inside the allocator phase: accepting the partial units at range edges.
               "edge_accept_median_us": statistics.median(edges) if edges else None}
        if policy == "lazy" and mem == "1G":
            base = row
        rows.append(row)
    for row in rows:
        row["ratio_to_lazy_1g"] = (row["median_us"] / base["median_us"]
                                   if base and base["median_us"] and row["median_us"] else None)
        row["kernel_ratio_to_lazy_1g"] = (
            row["kernel_median_us"] / base["kernel_median_us"]
            if base and base["kernel_median_us"] and row["kernel_median_us"] else None)
    goal = None
    top = max((r for r in rows if r["policy"] == "lazy" and r["ratio_to_lazy_1g"]),
              key=lambda r: r["mem_bytes"], default=None)
    if base and top and top is not base:
        goal = {"lazy_1g_median_us": base["median_us"], "size": top["mem"],
                "lazy_1g_min_us": base["min_us"], "lazy_1g_max_us": base["max_us"],
                "lazy_1g_runs": base["ok_runs"], "lazy_runs": top["ok_runs"],
                "lazy_4g_median_us": next((r["median_us"] for r in rows
                                           if r["policy"] == "lazy" and r["mem"] == "4G"), None),
                "lazy_median_us": top["median_us"], "ratio": top["ratio_to_lazy_1g"],
                "edge_accept_median_us": top["edge_accept_median_us"],
                "kernel_ratio": top["kernel_ratio_to_lazy_1g"],
                "ratio_interval": ratio_interval(top["ready_us"], base["ready_us"]),
                "met": top["ratio_to_lazy_1g"] <= GOAL_RATIO}
        # The same comparison without the boots that ran on a slowed host: a figure beside
        # the goal's, not a replacement (the goal is judged on every boot).
        s1, st = base["steady_us"], top["steady_us"]
        if limit is not None and s1 and st:
            goal["steady"] = {"limit_us": limit, "lazy_1g_runs": len(s1), "lazy_runs": len(st),
                              "lazy_1g_median_us": statistics.median(s1),
                              "lazy_median_us": statistics.median(st),
                              "ratio": statistics.median(st) / statistics.median(s1),
                              "ratio_interval": ratio_interval(st, s1)}
    return rows, goal


def _cell(v):
    if v is None:
        return "-"
    return v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else json.dumps(v)


def ms(us, digits=1):
    return "-" if us is None else "%.*f" % (digits, us / 1000.0)


def ratio(x):
    return "-" if x is None else "%.2f" % x


def ready_tables(rows, goal):
    t = report.Table(
        "Time to ready (workload=none)",
        ["policy", "RAM", "runs ok", "median ms", "min ms", "max ms", "x lazy 1G",
         "after EBS ms", "after EBS x lazy 1G", "firmware ms"],
        [[r["policy"], r["mem"], "%d/%d" % (r["ok_runs"], r["runs"]), ms(r["median_us"]),
          ms(r["min_us"]), ms(r["max_us"]), ratio(r["ratio_to_lazy_1g"]),
          ms(r["kernel_median_us"]), ratio(r["kernel_ratio_to_lazy_1g"]),
          ms(r.get("firmware_median_us"), 2)] for r in rows],
        "ready: efi_main to allocator ready. x lazy 1G: median over the lazy 1G median. "
        "after EBS: ready minus the efi_main_to_ebs phase, i.e. without the boot/ part "
        "(console, command line, platform and clock, ExitBootServices), which does not "
        "depend on RAM. firmware: the firmware's own calls inside efi_main_to_ebs (reading "
        "the command line file, GetMemoryMap, ExitBootServices; the boot_steps event).")
    cols = []
    for r in rows:
        for k in r["phases_median_us"]:
            if k not in cols:
                cols.append(k)
    p = report.Table(
        "Median boot phases (ms)", ["policy", "RAM"] + cols + ["of which edge accept"],
        [[r["policy"], r["mem"]] + [ms(r["phases_median_us"].get(k), 2) for k in cols] +
         [ms(r["edge_accept_median_us"], 2)] for r in rows],
        "Median over the runs of each phase's own duration. of which edge accept: the part "
        "of the allocator phase spent accepting the partial 2 MiB units at range edges "
        "(sim: zeroing them; the host backs each page on its first write), '-' where other "
        "accepts ran too.")
    return [t, p]


def ready_goal_text(rows):
    """The time-to-ready goal: median at most GOAL_READY_US at 1G and the largest lazy size."""
    lazy = [r for r in rows if r["policy"] == "lazy" and r["median_us"] is not None]
    if not lazy:
        return "Goal (time to ready at most %s ms): not measured." % ms(GOAL_READY_US)
    cells = [r for r in lazy if r["mem"] == "1G"] + \
        [max(lazy, key=lambda r: r["mem_bytes"])]
    cells = list({r["mem"]: r for r in cells}.values())
    parts = ["lazy %s %s ms (%s-%s, %d boots)" % (r["mem"], ms(r["median_us"]), ms(r["min_us"]),
                                                  ms(r["max_us"]), r["ok_runs"]) for r in cells]
    met = all(r["median_us"] <= GOAL_READY_US for r in cells)
    return "Goal: median time to ready at most %s ms at 1G and %s. Measured: %s: %s." % (
        ms(GOAL_READY_US), cells[-1]["mem"], ", ".join(parts), "MET" if met else "NOT MET")


def first_write_goal_text(runs_b):
    """Acceptance against first write, per policy (matrix b), judged by the same-time
    estimator (report.Run.same_time: lazy's paired units, eager's last runs against the
    first write right after ready); the totals ratio of each boot is given beside it.
    Eager is judged on its backed boots when there are any (its two sides cannot be
    paired in time, so on first-touch RAM they meet different host backing rates); its
    first-touch boots are then listed as not judged."""
    out = []
    for policy in ("lazy", "eager"):
        rs = [(r, r.same_time(), r.accept_vs_first_write())
              for r in runs_b if r.policy == policy]
        rs = [x for x in rs if x[1] is not None]
        shown = []
        if policy == "eager" and any(r.boot.backed for r, _, _ in rs):
            shown = [x for x in rs if not x[0].boot.backed]
            rs = [x for x in rs if x[0].boot.backed]
        if not rs:
            out.append("%s: not measured" % policy)
            continue
        worst = min(st["ratio"] for _, st, _ in rs)
        text = lambda xs: ", ".join(  # noqa: E731
            "%s %s [%s; totals %s]" % (r.label, report.same_time_text(st), st["basis"],
                                       ratio(tot)) for r, st, tot in xs)
        out.append("%s: %s" % (text(rs),
                                   "MET" if worst >= GOAL_FIRST_WRITE else "NOT MET"))
        if shown:
            out.append("eager on RAM backed on first touch, not judged: %s" % text(shown))
    return ("Goal: sim acceptance throughput at least %.1f of the first-write bandwidth "
            "under the same host conditions. Measured (accept / first write, same time; in "
            "brackets lazy's p10-p90 over the pairs, eager's slowest and fastest run; the "
            "totals ratio beside): %s." % (GOAL_FIRST_WRITE, "; ".join(out)))


def goal_text(goal):
    if not goal:
        return "Goal (the largest lazy size within 10% of lazy 1G): not measured (cells missing or failed)."
    pct = (goal["ratio"] - 1) * 100
    ci = ""
    iv = goal.get("ratio_interval")
    if iv:
        where = ("straddles %.2f, so this run alone cannot tell whether the goal is met"
                 if iv[0] <= GOAL_RATIO < iv[1] else
                 "lies below %.2f" if iv[1] <= GOAL_RATIO else "lies above %.2f") % GOAL_RATIO
        ci = (" 95%% bootstrap interval of the ratio (boots resampled): %.2f-%.2f; it %s." %
              (iv[0], iv[1], where))
    kern = ""
    if goal.get("kernel_ratio") is not None:
        kern = " After ExitBootServices only (the kernel's part): %+.1f%%." % (
            (goal["kernel_ratio"] - 1) * 100)
    noise = ""
    if goal.get("lazy_1g_runs", 0) > 1 and goal["lazy_1g_median_us"]:
        noise = (" Noise: the %d lazy 1G boots alone spread over %s-%s ms (%.0f%% of their "
                 "median), so differences of that size are not significant at this many "
                 "boots (--runs N boots each cell N times)." % (goal["lazy_1g_runs"], ms(goal["lazy_1g_min_us"]),
                             ms(goal["lazy_1g_max_us"]),
                             100.0 * (goal["lazy_1g_max_us"] - goal["lazy_1g_min_us"]) /
                             goal["lazy_1g_median_us"]))
    vs4 = ""
    if goal.get("lazy_4g_median_us") and goal["size"] != "4G":
        vs4 = (" Against lazy 4G, which has unaccepted memory and partial units too, "
               "lazy %s is %+.1f%%." % (
                   goal["size"], (goal["lazy_median_us"] / goal["lazy_4g_median_us"] - 1) * 100))
    edge = ""
    if goal.get("edge_accept_median_us"):
        edge = (" Lazy %s spends %s ms (median) of its time to ready accepting the partial "
                "units at range edges (at boot only when the allocator's table of them is "
                "full); the 10%% allowance is %s ms." % (
                    goal["size"], ms(goal["edge_accept_median_us"]),
                    ms(goal["lazy_1g_median_us"] * (GOAL_RATIO - 1))))
    steady = ""
    st = goal.get("steady")
    if st and (st["lazy_1g_runs"] < goal.get("lazy_1g_runs", 0) or
               st["lazy_runs"] < goal.get("lazy_runs", 0)):
        steady = (" Without the boots that ran while the host was slower (efi_main_to_ebs, "
                  "which does not grow with RAM, above %s ms, %.1fx the lazy boots' median): "
                  "lazy %s %s ms (%d boots) against lazy 1G %s ms (%d boots), %+.1f%%%s." % (
                      ms(st["limit_us"], 2), SLOWED_HOST, goal["size"], ms(st["lazy_median_us"]),
                      st["lazy_runs"], ms(st["lazy_1g_median_us"]), st["lazy_1g_runs"],
                      (st["ratio"] - 1) * 100,
                      " (interval %.2f-%.2f)" % tuple(st["ratio_interval"])
                      if st.get("ratio_interval") else ""))
    return ("Goal: lazy %s within 10%% of lazy 1G. Measured: %s ms against %s ms median, "
            "%+.1f%%: %s.%s%s%s%s%s%s" % (goal["size"], ms(goal["lazy_median_us"]),
                                          ms(goal["lazy_1g_median_us"]), pct,
                                          "MET" if goal["met"] else "NOT MET", ci, kern, edge,
                                          vs4, steady, noise))


# ---------------------------------------------------------------- more than one vCPU
def _median_span(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def _event(boot, name):
    return next((e for e in boot.events if e.get("event") == name), None)


def _alloc_ns(boot, step, key, which="alloc_all"):
    w = next((w for w in boot.workloads if w.get("name") == step), None)
    return ((w or {}).get(which) or {}).get(key)


def smp_results(cells):
    """Matrices (c) and (d) summed up: medians with min and max, and the two goals."""
    ok = [c for c in cells if c.matrix in ("c", "d") and c.status == "ok"]

    def pick(matrix, policy, smp, prealloc=False):
        return [c.boot for c in ok if c.matrix == matrix and c.policy == policy and
                c.smp == smp and c.prealloc == prealloc]

    res = {"eager": {}, "background": {}}
    for prealloc in (True, False):
        key = "backed" if prealloc else "first_touch"
        row = {}
        for smp in (1, 2):
            boots = pick("c", "eager", smp, prealloc)
            row["smp%d" % smp] = _median_span([b.ready_us for b in boots])
            row["split_smp%d" % smp] = [(b.summary or {}).get("accepted_by_cpu") for b in boots][:1]
        one, two = row["smp1"], row["smp2"]
        row["share"] = two["median"] / one["median"] if one and two and one["median"] else None
        res["eager"][key] = row
    bg = {}
    for policy in ("lazy", "background"):
        boots = pick("d", policy, 2)
        bg[policy] = {
            "ready": _median_span([b.ready_us for b in boots]),
            "touch_p99_ns": _median_span([_alloc_ns(b, "touch", "p99_ns") for b in boots]),
            "touch_p999_ns": _median_span([_alloc_ns(b, "touch", "p999_ns") for b in boots]),
            # Allocations that accepted nothing themselves: the allocator's fast path.
            "touch_fast_p99_ns": _median_span([_alloc_ns(b, "touch", "p99_ns", "alloc_fast")
                                               for b in boots]),
            "alloc2m_p99_ns": _median_span([_alloc_ns(b, "alloc2m", "p99_ns") for b in boots]),
            "left_unaccepted": [(b.summary or {}).get("unaccepted_bytes") for b in boots],
            "done_us": _median_span([(_event(b, "background") or {}).get("done_us")
                                     for b in boots]),
        }
    l, b = bg["lazy"], bg["background"]
    bg["ready_ratio"] = (b["ready"]["median"] / l["ready"]["median"]
                         if l["ready"] and b["ready"] and l["ready"]["median"] else None)
    res["background"] = bg
    return res


def _span_ms(x):
    if not x:
        return "-"
    return "%s (%s-%s, %d)" % (ms(x["median"]), ms(x["min"]), ms(x["max"]), x["n"])


def insn_results(cells, rows):
    """Matrix (e): instructions per phase and to ready at each size (the median of its
    boots, with their spread), beside the median times of matrix (a)'s lazy boots of the
    same size; the ratio of the largest size's median to 1G's."""
    out = {"sizes": [], "ratio": None, "goal_ratio": GOAL_INSN_RATIO}
    times = {r["mem"]: r for r in rows if r["policy"] == "lazy"}
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    for mem in [m for m in INSN_SIZES if any(c.matrix == "e" and c.mem == m for c in cells)]:
        runs = [c for c in cells if c.matrix == "e" and c.mem == mem]
        per_run = []
        for c in runs:
            i = c.instructions or {}
            if not i.get("to_ready"):
                continue
            acc = i.get("accept") if isinstance(i.get("accept"), dict) else {}
            summ = (c.boot.summary if c.boot is not None and not getattr(c.boot, "fatal", None)
                    else None) or {}
            units = (summ.get("accepted_bytes") or 0) // UNIT
            per_run.append({"to_ready": i["to_ready"], "phases": i.get("phases") or {},
                            "calls": acc.get("calls"),
                            "outside": acc["outside_platform"] / units
                            if units and acc.get("outside_platform") is not None else None,
                            "inside": acc["in_platform"] / units
                            if units and acc.get("in_platform") is not None else None,
                            "units": units, "log": c.log})
        failed = [c for c in runs if not (c.instructions or {}).get("to_ready")]
        t = times.get(mem, {})
        keys = []
        for r in per_run:
            keys += [k for k in r["phases"] if k not in keys]
        out["sizes"].append({
            "mem": mem, "runs": len(per_run),
            "status": "ok" if per_run else (failed[0].status if failed else "pending"),
            "reason": "" if per_run else (failed[0].reason if failed else ""),
            "to_ready": med([r["to_ready"] for r in per_run]),
            "to_ready_all": [r["to_ready"] for r in per_run],
            "phases": {k: med([r["phases"][k] for r in per_run if k in r["phases"]]) for k in keys},
            "accept_calls": med([r["calls"] for r in per_run if r["calls"] is not None]),
            "units": med([r["units"] for r in per_run]),
            "accept_outside_per_unit": med([r["outside"] for r in per_run if r["outside"] is not None]),
            "accept_platform_per_unit": med([r["inside"] for r in per_run if r["inside"] is not None]),
            "ready_median_us": t.get("median_us"),
            "phases_median_us": t.get("phases_median_us") or {},
            "log": per_run[0]["log"] if per_run else None})
    ok = [x for x in out["sizes"] if x["to_ready"]]
    if len(ok) == len(INSN_SIZES) and ok[0]["mem"] == INSN_SIZES[0]:
        out["ratio"] = ok[-1]["to_ready"] / ok[0]["to_ready"]
    return out


def insn_table(res):
    cols = []
    for x in res["sizes"]:
        for k in x["phases"]:
            if k not in cols:
                cols.append(k)
    rows = []
    per = lambda v: "-" if v is None else "%.0f" % v  # noqa: E731
    for x in res["sizes"]:
        rows.append(["%s instructions" % x["mem"]] + [x["phases"].get(k, "-") for k in cols] +
                    [x["to_ready"] if x["to_ready"] is not None else "-",
                     per(x.get("accept_outside_per_unit")), per(x.get("accept_platform_per_unit"))])
        rows.append(["%s median ms (a)" % x["mem"]] +
                    [ms(x["phases_median_us"].get(k), 2) for k in cols] +
                    [ms(x["ready_median_us"], 2), "", ""])
    return report.Table(
        "Boot cost in instructions (matrix e) beside time (matrix a)",
        ["RAM"] + cols + ["ready", "accept/unit outside platform", "accept/unit in platform"],
        rows,
        "Guest instructions the boot vCPU ran in each phase (the observer's `instructions` "
        "event: whole translation blocks counted at entry, cut at the phase markers; firmware "
        "code called from efi_main included), one boot each with -cpu max,phys-bits=46; "
        "beside them the median phase times of matrix (a)'s lazy boots of the same size "
        "(without the observer; 1G there runs QEMU's default CPU). accept/unit: per 2 MiB unit "
        "the touch after ready accepted, the instructions of the accept path (mm/accept.c: "
        "claiming the unit, the statistics, its way to the free lists; kernel/memory.c "
        "accept_backend: mapping it) outside the platform's accept call, and inside it (sim: "
        "zeroing the unit). Each figure is the median of the size's boots.")


def insn_goal_text(res):
    if res["ratio"] is None:
        why = "; ".join("%s: %s" % (x["mem"], x["reason"] or x["status"]) for x in res["sizes"]
                        if not x["to_ready"]) or "not run"
        return "Goal (instructions to ready at %s within %d%% of %s): not measured (%s)." % (
            INSN_SIZES[-1], round((GOAL_INSN_RATIO - 1) * 100), INSN_SIZES[0], why)
    a, b = res["sizes"][0], res["sizes"][-1]
    spread = lambda x: "%d-%d over %d boot(s)" % (min(x["to_ready_all"]), max(x["to_ready_all"]),  # noqa: E731
                                                  len(x["to_ready_all"])) if x.get("to_ready_all") else "-"
    return ("Goal: instructions to ready at %s at most %.2f x %s. Measured (medians): %d (%s) "
            "against %d (%s), %.4f: %s." % (
                b["mem"], GOAL_INSN_RATIO, a["mem"], b["to_ready"], spread(b), a["to_ready"],
                spread(a), res["ratio"], "MET" if res["ratio"] <= GOAL_INSN_RATIO else "NOT MET"))


def smp_goal_texts(res):
    """The goals for more than one vCPU (docs/measuring.md), each MET or NOT MET with its figures."""
    out = []
    for key, what in (("backed", "guest RAM backed by the host before boot"),
                      ("first_touch", "guest RAM backed by the host on first touch")):
        row = res["eager"].get(key) or {}
        if row.get("share") is None:
            out.append("Eager %s on 2 vCPUs (%s): not measured." % (SMP_EAGER_MEM, what))
            continue
        out.append("Eager %s, %s: 2 vCPUs ready in %s ms against %s ms on 1 vCPU (medians): "
                   "%.3f of the 1-vCPU time, %.2fx; goal at most %.3f: %s." % (
                       SMP_EAGER_MEM, what, ms(row["smp2"]["median"]), ms(row["smp1"]["median"]),
                       row["share"], 1 / row["share"], GOAL_SMP_SHARE,
                       "MET" if row["share"] <= GOAL_SMP_SHARE else "NOT MET"))
    bg = res["background"]
    l, b = bg["lazy"], bg["background"]
    keys = ("touch_p99_ns", "touch_p999_ns", "alloc2m_p99_ns")
    if bg.get("ready_ratio") is None or not all(l[k] and b[k] for k in keys):
        out.append("Background %s: not measured." % BACKGROUND_MEM)
        return out
    all_accepted = all(x == 0 for x in b["left_unaccepted"]) and b["left_unaccepted"]
    ready_ok = bg["ready_ratio"] <= GOAL_RATIO
    lower = {k: b[k]["median"] < l[k]["median"] for k in keys}
    us = lambda x, k: x[k]["median"] / 1000.0  # noqa: E731
    out.append("Background %s on 2 vCPUs: ready %s ms against lazy %s ms (%+.1f%%, goal within "
               "%d%%): %s; everything accepted in the end: %s." % (
                   BACKGROUND_MEM, ms(b["ready"]["median"]), ms(l["ready"]["median"]),
                   (bg["ready_ratio"] - 1) * 100, round((GOAL_RATIO - 1) * 100),
                   "MET" if ready_ok else "NOT MET", "yes" if all_accepted else "no"))
    out.append("Allocation latency, background against lazy (medians over boots; goal lower): "
               "touch p99 %.1f against %.1f us (%s), touch p999 %.1f against %.1f us (%s), "
               "alloc2m p99 %.1f against %.1f us (%s). touch allocates 4 KiB pages, of which "
               "about one in a thousand needs a unit accepted under lazy, so its p99 is the "
               "fast path under both policies; every alloc2m allocation past the free memory "
               "needs one." % (
                   us(b, keys[0]), us(l, keys[0]), "lower" if lower[keys[0]] else "NOT lower",
                   us(b, keys[1]), us(l, keys[1]), "lower" if lower[keys[1]] else "NOT lower",
                   us(b, keys[2]), us(l, keys[2]), "lower" if lower[keys[2]] else "NOT lower"))
    # One boot's touch p99 moves with the host's load: give the spread over boots too.
    fast = "touch_fast_p99_ns"
    out.append("touch p99 over %d/%d boots: background %.1f-%.1f us, lazy %.1f-%.1f us "
               "(ranges %s); the fast path alone (allocations that accepted nothing) p99 "
               "%s against %s us." % (
                   b[keys[0]]["n"], l[keys[0]]["n"], b[keys[0]]["min"] / 1000.0,
                   b[keys[0]]["max"] / 1000.0, l[keys[0]]["min"] / 1000.0,
                   l[keys[0]]["max"] / 1000.0,
                   "overlap" if b[keys[0]]["min"] <= l[keys[0]]["max"] and
                   l[keys[0]]["min"] <= b[keys[0]]["max"] else "do not overlap",
                   "%.1f" % us(b, fast) if b.get(fast) else "-",
                   "%.1f" % us(l, fast) if l.get(fast) else "-"))
    return out


def smp_table(res):
    rows = []
    for key, what in (("backed", "backed before boot"), ("first_touch", "on first touch")):
        row = res["eager"].get(key) or {}
        for smp in (1, 2):
            split = (row.get("split_smp%d" % smp) or [None])[0]
            rows.append(["eager %s" % SMP_EAGER_MEM, smp, what, _span_ms(row.get("smp%d" % smp)),
                         "-", " / ".join(ml.format_size(x) for x in split) if split else "-"])
    bg = res["background"]
    for policy in ("lazy", "background"):
        x = bg[policy]
        lat = " / ".join("%.1f" % (x[k]["median"] / 1000.0) if x[k] else "-"
                         for k in ("touch_p99_ns", "touch_p999_ns", "alloc2m_p99_ns"))
        rows.append(["%s %s" % (policy, BACKGROUND_MEM), 2, "on first touch", _span_ms(x["ready"]),
                     lat,
                     ("all accepted at %s ms" % ms(x["done_us"]["median"])) if x["done_us"] else "-"])
    return report.md_table(["cell", "vCPUs", "host memory", "ready ms: median (min-max, boots)",
                            "alloc us: touch p99 / p999 / alloc2m p99", "accepted by vCPU / background"], rows)


# ---------------------------------------------------------------- output
def write_report(o, info, cells, skipped, rows, goal, runs_b, host, messages, plots, wall, smp,
                 insn=None):
    r = ["# memaccept benchmark\n",
         "Generated by `make bench` (tools/bench.py%s) on %s." % (
             " --quick" if o.quick else "", datetime.datetime.now().strftime("%Y-%m-%d %H:%M")),
         "",
         "- Wall time: **%.0f s** (%.1f min), %d boots, %d at a time" % (
             wall, wall / 60, sum(1 for c in cells if c.status != "skipped"), o.jobs),
         "- Host: %s, %s CPUs, %s RAM; %s" % (info["cpu"], info["cpus"],
                                             ml.format_size(host_mem_total()), info["kernel"]),
         "- QEMU: %s, TCG, q35%s, 1 vCPU (2 where a section says so), guest RAM "
         "reserve=off (backed by the host on first touch) unless a section says otherwise, "
         "host THP off; OVMF %s" % (
             info["qemu"], "," + o.machine if o.machine else " (default memory layout)",
             info["ovmf_code"]),
         "- Image: `%s` (git %s)" % (os.path.relpath(o.efi, ROOT), info["git"]),
         "- Every boot: `%s` (platform sim: acceptance zeroes the memory), so every "
         "size, 1G included, has unaccepted memory." % FAKE,
         "- Host load average (1 min) at start %s, at end %s; other QEMU processes "
         "running at start: %s. Other work on the host slows guests down and widens the "
         "spread." % (info.get("load_start", "?"), info.get("load_end", "?"),
                      info.get("other_qemu_at_start", "?")),
         "- TCG timings are noisy (two guests share the host's cores): compare medians, "
         "not single boots. The clock's source and error bound are in each log's timing "
         "event.",
         ""]
    r.append("## Time to ready\n")
    ready_t, phases_t = ready_tables(rows, goal)
    r.append(report.render_markdown([ready_t], level=3))
    r.append("**%s**\n" % ready_goal_text(rows))
    r.append("**%s**\n" % goal_text(goal))
    r.append(report.render_markdown([phases_t], level=3))
    r.append("Eager is measured at 1G and 4G only: eager acceptance writes every byte of "
             "guest memory, so an eager 64G or 256G guest would need that much host memory "
             "(this host has %s).\n" % ml.format_size(host_mem_total()))
    if insn is not None:
        r.append("## Boot cost in instructions\n")
        r.append(report.render_markdown([insn_table(insn)], level=3))
        r.append("**%s**\n" % insn_goal_text(insn))
    r.append("## More than one vCPU\n")
    r.append("Eager at %s on 1 and 2 vCPUs, alternating, one boot at a time; guest RAM "
             "either backed by the host before the guest starts (QEMU prealloc=on) or, as "
             "everywhere else, on first touch. Background against lazy at %s on 2 vCPUs "
             "under `%s`.\n" % (SMP_EAGER_MEM, BACKGROUND_MEM, BACKGROUND_WORKLOAD))
    r.append(smp_table(smp))
    r.append("")
    r += ["**%s**\n" % t for t in smp_goal_texts(smp)]
    r.append("## Policies under a workload\n")
    r.append("`%s`, policies `lazy`, `eager`, `ahead` (accept_ahead=64M), one boot each; "
             "eager once more with guest RAM backed by the host before boot (QEMU "
             "prealloc=on, \"backed\"), one boot at a time. Eager accepts everything before "
             "ready and first-writes after it, so its two rates cannot be taken side by side; "
             "on RAM backed on first touch each side then pays whatever the host charges for "
             "fresh memory at that moment, so eager's goal is judged on the backed boots.\n" %
             POLICY_WORKLOAD)
    for c in skipped:
        r.append("- **%s %s: skipped**: %s" % (c.policy, c.mem, c.reason))
    r.append("")
    r.append("**%s**\n" % first_write_goal_text(runs_b))
    r.append(report.render_markdown(report.tables(runs_b), level=3))
    if plots:
        r.append("## Plots\n")
        captions = {
            "latency_cdf.png": "Allocation latency CDF per policy and size (policy "
                               "matrix, the touch step: the one with the most allocations).",
            "accept_series.png": "Accepted memory over time, one panel per policy (policy "
                                 "matrix); the dot marks ready.",
            "ready_vs_ram.png": "Time to ready against guest RAM per policy, median with "
                                "min-max bars, over every boot of both matrices (ready comes "
                                "before the workload, so both count).",
        }
        for title, path in plots:
            f = os.path.basename(path)
            r.append("### %s\n\n![%s](%s)\n\n%s\n" % (title, title, f, captions.get(f, "")))
    r.append("## Host benchmarks\n")
    if host["status"] == "absent":
        r.append("Not run: %s.\n" % host["note"])
    else:
        r.append("`make -s %s`: %s, %d result(s) in %.1f s.%s\n" % (
            " ".join(host["targets"]), host["status"], len(host["results"]),
            host.get("seconds", 0), " " + host["note"] if host["note"] else ""))
        # One table per benchmark name, its fields as columns, in the order printed.
        names = []
        for x in host["results"]:
            if str(x.get("bench")) not in names:
                names.append(str(x.get("bench")))
        for n in names:
            xs = [x for x in host["results"] if str(x.get("bench")) == n]
            cols = []
            for x in xs:
                cols += [k for k in x if k != "bench" and k not in cols]
            r.append("### %s\n" % n)
            r.append(report.md_table(cols, [[_cell(x.get(k)) for k in cols] for x in xs]))
            r.append("")
    bad = [c for c in cells if c.status not in ("ok", "skipped")]
    if bad or messages:
        r.append("## Problems\n")
        r += ["- boot %s: %s: %s (log `%s`)" % (c.name, c.status, c.reason, c.log) for c in bad]
        r += ["- `%s`: %s" % (os.path.relpath(p, o.out), m) for p, m in messages]
        r.append("")
    r.append("## Files\n")
    r.append("- `results.json`: every cell, its command line, status, ready, phases, "
             "summary and workload events; the ready matrix; host benchmarks.")
    r.append("- `logs/NAME.log`: each boot's console; `logs/NAME.meta.json`: how it was "
             "booted. Compare any of them with `make report LOG=\"build/bench/logs/b-*.log\"`.")
    r.append("- Reproduce one cell: `python3 tools/runqemu.py --efi build/memaccept.efi "
             "--mem 4G --args \"%s accept_memory=lazy %s\"`." % (FAKE, POLICY_WORKLOAD))
    with open(os.path.join(o.out, "report.md"), "w") as f:
        f.write("\n".join(r) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer cells, one run each")
    ap.add_argument("--jobs", type=int, default=2, help="boots at a time (default 2)")
    ap.add_argument("--runs", type=int, help="boots per time-to-ready cell (default 11)")
    ap.add_argument("--efi", default=os.path.join(ROOT, "build", "memaccept.efi"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--qemu", default=runqemu.DEFAULT_QEMU)
    ap.add_argument("--machine", default="",
                    help="q35 properties for every boot, e.g. max-ram-below-4g=1G")
    ap.add_argument("--ovmf-code", default=runqemu.DEFAULT_CODE)
    ap.add_argument("--ovmf-vars", default=runqemu.DEFAULT_VARS)
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds per boot (eager gets 30 s more per GiB)")
    ap.add_argument("--host-timeout", type=int, default=600, help="seconds for the host benchmarks")
    ap.add_argument("--no-host", action="store_true", help="skip the host benchmarks")
    ap.add_argument("--bios", help="a single-file firmware image (-bios) instead of the flash pair")
    ap.add_argument("--cc-host", choices=hostlaunch.HOSTS,
                    help="boot every cell under KVM on a real TDX or SEV-SNP host "
                    "(tools/hostlaunch.py; --bios names the firmware)")
    ap.add_argument("--matrices", default="abcde",
                    help="which matrices to boot (letters a-e, default all): e.g. e for the "
                         "instruction counts alone")
    ap.add_argument("--observer", help="the instruction observer plugin (build/observer.so) for "
                    "matrix (e); without it (e) is skipped")
    o = ap.parse_args(argv)
    if o.cc_host:
        problems = hostlaunch.host_problems(o.cc_host, o.qemu, o.bios)
        if problems:
            print(hostlaunch.refuse_message(o.cc_host, problems), file=sys.stderr)
            return hostlaunch.REFUSED
    if o.jobs < 1:
        ap.error("--jobs must be at least 1")
    if o.runs is not None and o.runs < 1:
        ap.error("--runs must be at least 1")
    fw = (("firmware", o.bios),) if o.bios else (("OVMF code", o.ovmf_code),
                                                 ("OVMF vars", o.ovmf_vars))
    for what, f in (("image", o.efi),) + fw:
        if not os.path.exists(f):
            print("bench: %s %s not found%s" % (what, f, ": run make" if what == "image" else ""),
                  file=sys.stderr)
            return 2
    if not shutil.which(o.qemu) and not os.path.exists(o.qemu):
        print("bench: %s not found (Debian package qemu-system-x86)" % o.qemu, file=sys.stderr)
        return 2

    t0 = time.monotonic()
    logs = os.path.join(o.out, "logs")
    # Old logs would be mistaken for this run's by `make report LOG=...`.
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    info = host_info(o)
    info["load_start"] = _loadavg()
    info["other_qemu_at_start"] = other_qemus()
    if info["other_qemu_at_start"]:
        print("bench: %d other QEMU process(es) running: timings will be slower and noisier" %
              info["other_qemu_at_start"], flush=True)
    cells, skipped = matrix_cells(o.quick, o.runs)
    cells = [c for c in cells if c.matrix in o.matrices]
    skipped = [c for c in skipped if c.matrix in o.matrices]
    if not o.observer or not os.path.exists(o.observer):
        for c in [c for c in cells if c.observer]:
            c.status, c.reason = "skipped", "no instruction observer (--observer %s)" % (o.observer or "")
            cells.remove(c)
            skipped.append(c)
    for c in skipped:
        print("bench: skip %s: %s" % (c.name, c.reason), flush=True)
    # Time to ready one boot at a time, in rounds (every size once, then again), so that
    # drift in the host's state spreads over all sizes instead of favouring one; then the
    # policy matrix with o.jobs boots at a time.
    run_cells(ready_order(cells), o, t0, 1, longest_first=False)
    # Then more than one vCPU, also one boot at a time (a 2-vCPU guest takes both cores).
    run_cells([c for c in cells if c.matrix in ("c", "d")], o, t0, 1, longest_first=False)
    # Instructions: the count does not depend on the host's load, so any time will do.
    run_cells([c for c in cells if c.matrix == "e"], o, t0, 1, longest_first=False)
    run_cells([c for c in cells if c.matrix == "b" and not c.prealloc], o, t0, o.jobs)
    # Backed boots alone: backing takes both cores, and their rates are the judged ones.
    run_cells([c for c in cells if c.matrix == "b" and c.prealloc], o, t0, 1)
    host = {"status": "absent", "note": "--no-host", "results": [], "targets": []} \
        if o.no_host else host_benchmarks(o)

    # The report's own loader, so that bench and report.py read logs one way.
    done = [c for c in cells if c.boot is not None]
    boots = {os.path.join(o.out, c.log): c.boot for c in done}
    # Default labels (policy and RAM from the sidecar); matrix (a)'s repeats get #2, #3.
    paths = lambda m: [os.path.join(o.out, c.log) for c in done if c.matrix == m]  # noqa
    runs_b, msg_b = report.load_runs(paths("b"), boots=boots)
    runs_a, msg_a = report.load_runs(paths("a"), boots=boots)
    messages = msg_a + msg_b
    rows, goal = ready_matrix(cells)
    smp = smp_results(cells)
    insn = insn_results(cells + skipped, rows)
    plots, pmsgs = report.draw_plots(runs_b, o.out,
                                     which={"ready_vs_ram.png": runs_a + runs_b})
    for m in pmsgs:
        print("bench: plots: %s" % m, file=sys.stderr)

    print()
    print(report.render_text(ready_tables(rows, goal)))
    print(ready_goal_text(rows))
    print(goal_text(goal))
    print()
    print(report.render_text([insn_table(insn)]))
    print(insn_goal_text(insn))
    print()
    print(report.render_text(report.tables(runs_b)))
    print(first_write_goal_text(runs_b))
    print()
    print("\n".join(smp_goal_texts(smp)))
    for c in skipped:
        print("skipped: %s %s: %s" % (c.policy, c.mem, c.reason))
    for p, m in messages:
        print("bench: %s: %s" % (os.path.relpath(p, o.out), m), file=sys.stderr)

    info["load_end"] = _loadavg()
    wall = time.monotonic() - t0
    results = {
        "generated": datetime.datetime.now().isoformat(timespec="seconds"),
        "quick": o.quick, "jobs": o.jobs, "wall_seconds": round(wall, 1), "host": info,
        "cells": [c.to_json() for c in cells + skipped],
        "ready_matrix": rows, "goal": goal, "smp": smp, "instructions": insn,
        "host_benchmarks": host,
        "plots": [os.path.basename(p) for _, p in plots],
        "log_problems": [{"log": p, "message": m} for p, m in messages],
    }
    with open(os.path.join(o.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    write_report(o, info, cells, skipped, rows, goal, runs_b, host, messages, plots, wall, smp, insn)
    failed = [c for c in cells if c.status not in ("ok", "skipped")]
    print("bench: %s/results.json, %s/report.md; %d boot(s) failed; total wall time %.0f s "
          "(%.1f min)" % (os.path.relpath(o.out), os.path.relpath(o.out), len(failed), wall,
                          wall / 60))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
