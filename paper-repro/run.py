#!/usr/bin/env python3
"""`make repro`: the experiments of the CAPE papers on an emulated cluster, beside the papers'
numbers (paper-repro/README.md).

  paper-repro/run.py [--full] [--build build] [--out paper-repro/out] [--link 100mbit|1gbit|none]
                     [--only 1,2,...] [--reps R]

Writes OUT/e<k>*.csv and OUT/meta.json; report.py turns them into plots and REPORT.md. Every
CAPE and MPI run's output is compared with the sequential program's (VECTOR's with gcc
-fopenmp's at the same team size, see vector.c) before its time is kept; a run whose output
differs stops the experiments with the difference.
"""

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import cluster
from cluster import Cluster, RunError, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

QUICK = {
    "e1_sizes": [400, 700, 1000],
    "nodes": [2, 3, 4],
    "e2_size": 800,
    "e2_sizes": [400, 800, 1000],
    "e4_size": 800,
    "vector_sizes": [2000, 4000, 6000, 8000, 10000, 12000, 14000],
    "reps": 3,
}
# FULL=1: larger matrices and up to 8 nodes (the papers' sizes, 3000-12000, would take hours on a
# few cores: 001 Table II's 3000x3000 took 259 s sequentially on one 3 GHz core).
FULL = {
    "e1_sizes": [1000, 1500, 2000],
    "nodes": [2, 3, 4, 6, 8],
    "e2_size": 1500,
    "e2_sizes": [1000, 1500, 2000],
    "e4_size": 1500,
    "vector_sizes": [2000, 4000, 6000, 8000, 10000, 12000, 14000],
    "reps": 3,
}


class Repro:
    def __init__(self, a):
        self.a = a
        self.cfg = dict(FULL if a.full else QUICK)
        if a.reps:
            self.cfg["reps"] = a.reps
        self.out = os.path.abspath(a.out)
        self.bin = os.path.join(self.out, "bin")
        self.work = os.path.join(self.out, "work")
        for d in (self.out, self.bin, self.work):
            os.makedirs(d, exist_ok=True)
        build = os.path.abspath(a.build)
        self.cape = os.path.join(build, "cli", "cape")
        self.cape_cc = os.path.join(build, "translator", "cape-cc")
        self.libcape = os.path.join(build, "runtime", "libcape.a")
        for f in (self.cape, self.cape_cc, self.libcape):
            if not os.path.exists(f):
                sys.exit("run.py: %s is missing: build cape first (make repro does)" % f)
        self.checks = 0
        self.cache = {}  # (system, ...) -> the median run of a point, measured once
        self.started = time.monotonic()
        self.step = 0
        self.meta = {"config": self.cfg, "full": a.full, "link": a.link, "node_timeout": cluster.NODE_TIMEOUT}

    # -- progress, building, checking ------------------------------------------------------

    def progress(self, what):
        self.step += 1
        print("[repro %5.0fs] %s" % (time.monotonic() - self.started, what), file=sys.stderr, flush=True)

    def build(self, name, argv):
        exe = os.path.join(self.bin, name)
        if not os.path.exists(exe):
            run(argv + ["-o", exe])
        return exe

    def mamult(self, kind, n):
        src = os.path.join(HERE, "mamult.c")
        d = "-DMAX_N=%d" % n
        if kind == "seq":
            return self.build("mamult-seq-%d" % n, ["gcc", "-O2", d, src])
        if kind == "omp":
            return self.build("mamult-omp-%d" % n, ["gcc", "-O2", "-fopenmp", d, src])
        if kind == "mpi":
            return self.build("mamult-mpi-%d" % n, ["mpicc", "-O2", d, os.path.join(HERE, "mamult_mpi.c")])
        if kind == "dickpt":
            return self.build("mamult-cape-%d" % n, [self.cape_cc, "-O2", d, src])
        if kind == "dickpt-idle":
            return self.build("mamult-cape-idle-%d" % n, [self.cape_cc, "-O2", "--master-idle", d, src])
        if kind == "tickpt":
            return self.build("mamult-tickpt-%d" % n, [self.cape_cc, "-O2", "--ckpt=tickpt", d, src])
        raise ValueError(kind)

    def check(self, what, got, want):
        """Every CAPE/MPI output is the reference's, or the experiments stop here."""
        self.checks += 1
        cluster.check_output(what, got, want)

    def reference(self, n):
        if not hasattr(self, "_refs"):
            self._refs = {}
        if n not in self._refs:
            self._refs[n] = run(["taskset", "-c", "0", self.mamult("seq", n), str(n)])[0]
        return self._refs[n]

    def retrying(self, f):
        """f(), once more if the job could not run (a daemon that did not start): counted in
        meta.json. A wrong output is never retried."""
        try:
            return f()
        except RunError as e:
            if "output differs" in str(e):
                raise
            self.meta.setdefault("retries", []).append(str(e).splitlines()[0][:300])
            self.progress("retrying once: %s" % str(e).splitlines()[0][:120])
            return f()

    def reps(self, f):
        """Median wall time of R runs of f() (each returns a dict with 'wall'); the runs' dicts."""
        rs = [self.retrying(f) for _ in range(self.cfg["reps"])]
        walls = sorted(r["wall"] for r in rs)
        best = min(rs, key=lambda r: abs(r["wall"] - statistics.median(walls)))
        return statistics.median(walls), best, rs

    def cape_run(self, c, kind, n, nodes, tracker="uffd"):
        key = ("cape", kind, n, nodes, tracker)
        if key not in self.cache:
            self.cache[key] = self._cape_run(c, kind, n, nodes, tracker)
        return self.cache[key]

    def mpi_run(self, c, n, nodes):
        key = ("mpi", n, nodes)
        if key not in self.cache:
            self.cache[key] = self._mpi_run(c, n, nodes)
        return self.cache[key]

    def _cape_run(self, c, kind, n, nodes, tracker):
        exe = self.mamult(kind, n)
        want = self.reference(n)

        def once():
            r = c.cape(self.cape, [exe, str(n)], nodes, self.work, tracker=tracker)
            self.check("CAPE %s mamult %d on %d nodes" % (kind, n, nodes), r["out"], want)
            shutil.rmtree(r["dir"], ignore_errors=True)
            return r
        return self.reps(once)

    def _mpi_run(self, c, n, nodes):
        exe = self.mamult("mpi", n)
        want = self.reference(n)

        def once():
            r = c.mpi(exe, [str(n)], nodes, self.work)
            self.check("MPI mamult %d on %d ranks" % (n, nodes), r["out"], want)
            return r
        return self.reps(once)

    def write_csv(self, name, header, rows):
        with open(os.path.join(self.out, name), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)

    # -- the experiments ---------------------------------------------------------------------

    def e1(self):
        """001 Table II / 003 Table I: sequential (one core) vs OpenMP (every core) on one node."""
        rows = []
        for n in self.cfg["e1_sizes"]:
            self.progress("experiment 1: sequential vs OpenMP, %dx%d" % (n, n))
            seq, omp = self.mamult("seq", n), self.mamult("omp", n)
            want = self.reference(n)
            ts, to = [], []
            for _ in range(self.cfg["reps"]):
                o, _, w = run(["taskset", "-c", "0", seq, str(n)])
                self.check("sequential %d" % n, o, want)
                ts.append(w)
                o, _, w = run([omp, str(n)], env={"OMP_NUM_THREADS": str(os.cpu_count())})
                self.check("OpenMP %d" % n, o, want)
                to.append(w)
            s, p = statistics.median(ts), statistics.median(to)
            rows.append([n, "%.4f" % s, "%.4f" % p, "%.3f" % (s / p), os.cpu_count()])
        self.write_csv("e1_seq_omp.csv", ["size", "sequential_s", "openmp_s", "speedup", "threads"], rows)

    def e2_e3(self, c):
        """001/003 Fig. 4-5 (CAPE vs MPI, phases on master and slaves) and Fig. 6 (speedup)."""
        rows, phase_rows = [], []
        seq_time = {}
        points = [(self.cfg["e2_size"], k) for k in self.cfg["nodes"]]
        points += [(n, max(self.cfg["nodes"])) for n in self.cfg["e2_sizes"] if n != self.cfg["e2_size"]]
        for n, k in points:
            if n not in seq_time:
                seq_time[n] = statistics.median(
                    run(["taskset", "-c", "0", self.mamult("seq", n), str(n)])[2] for _ in range(self.cfg["reps"]))
            self.progress("experiments 2-3: CAPE vs MPI, %dx%d on %d nodes" % (n, n, k))
            tc, best, _ = self.cape_run(c, "dickpt", n, k)
            tm, mbest, _ = self.mpi_run(c, n, k)
            # Bytes the master moved: CAPE's shares sent, parts merged, result broadcast (the trace);
            # MPI's: the rows rank 0 gathers.
            tr = best["trace"]
            cape_bytes = sum(cluster.call_bytes(tr, 0, c) for c in ("send", "wait_for", "broadcast"))
            mpi_bytes = mbest["ranks"].get(0, {}).get("bytes", 0)
            rows.append([n, k, "%.4f" % tc, "%.4f" % tm, "%.3f" % (tc / tm), "%.4f" % seq_time[n],
                         "%.3f" % (seq_time[n] / tc), "%.3f" % (seq_time[n] / tc / k), "%.3f" % (seq_time[n] / tm),
                         "not yet", cape_bytes, mpi_bytes])
            ph = cluster.phases(best["trace"])
            slaves = [ph[p] for p in ph if p != 0]
            for who, vals in (("master", ph.get(0)), ("slaves", _mean(slaves))):
                if vals:
                    phase_rows.append([n, k, "CAPE", who] + ["%.4f" % vals[x] for x in PHASES])
            mr = mbest["ranks"]
            for who, vals in (("master", mr.get(0)), ("slaves", _mean([mr[r] for r in mr if r != 0]))):
                if vals:
                    phase_rows.append([n, k, "MPI", who] + ["%.4f" % vals[x] for x in PHASES])
        self.write_csv("e2_cape_mpi.csv", ["size", "nodes", "cape_s", "mpi_s", "cape_over_mpi", "sequential_s",
                                           "cape_speedup", "cape_efficiency", "mpi_speedup", "cape1_s",
                                           "cape_master_bytes", "mpi_master_bytes"], rows)
        self.write_csv("e2_phases.csv", ["size", "nodes", "system", "node"] + PHASES, phase_rows)

    def e4(self, c):
        """002 Fig. 9-10 (DICKPT vs TICKPT vs MPI) and Fig. 11 (VECTOR's merged checkpoint sizes)."""
        rows = []
        kmax = max(self.cfg["nodes"])
        points = [(n, kmax) for n in self.cfg["e2_sizes"]] + [(self.cfg["e4_size"], k) for k in self.cfg["nodes"]
                                                               if k != kmax]
        for n, k in points:
            self.progress("experiment 4: DICKPT vs TICKPT vs MPI, %dx%d on %d nodes" % (n, n, k))
            ti, _, _ = self.cape_run(c, "dickpt-idle", n, k)
            td, _, _ = self.cape_run(c, "dickpt", n, k)
            tt, _, _ = self.cape_run(c, "tickpt", n, k)
            tm, _, _ = self.mpi_run(c, n, k)
            rows.append([n, k, "%.4f" % ti, "%.4f" % td, "%.4f" % tt, "%.4f" % tm, "%.3f" % (ti / tt),
                         "%.3f" % (tt / tm)])
        self.write_csv("e4_dickpt_tickpt.csv", ["size", "nodes", "dickpt_master_idle_s", "dickpt_s", "tickpt_s",
                                                "mpi_s", "dickpt_idle_over_tickpt", "tickpt_over_mpi"], rows)
        # VECTOR: the merged checkpoint on the master (its inject of "after"), both models,
        # through cape-cc and by hand (vector_cape.c).
        vmax = max(self.cfg["vector_sizes"])
        src, hand = os.path.join(HERE, "vector.c"), os.path.join(HERE, "vector_cape.c")
        d = "-DMAX_N=%d" % vmax
        exes = {
            "cc-dickpt": self.build("vector-cape", [self.cape_cc, "-O2", d, src]),
            "cc-tickpt": self.build("vector-tickpt", [self.cape_cc, "-O2", "--ckpt=tickpt", d, src]),
            "hand": self.build("vector-hand", ["gcc", "-O2", d, "-I", os.path.join(ROOT, "runtime", "include"),
                                               hand, self.libcape]),
        }
        omp = self.build("vector-omp", ["gcc", "-O2", "-fopenmp", d, src])
        vrows = []
        for n in self.cfg["vector_sizes"]:
            self.progress("experiment 4: VECTOR checkpoint sizes, N = M = %d on %d nodes" % (n, kmax))
            want = run([omp, str(n)], env={"OMP_NUM_THREADS": str(kmax)})[0]
            sizes = {}
            for label, argv in (("cc-dickpt", [exes["cc-dickpt"], str(n)]), ("cc-tickpt", [exes["cc-tickpt"], str(n)]),
                                ("hand-dickpt", [exes["hand"], str(n), str(n), "dickpt"]),
                                ("hand-tickpt", [exes["hand"], str(n), str(n), "tickpt"])):
                r = self.retrying(lambda: c.cape(self.cape, argv, kmax, self.work))
                self.check("VECTOR %s %d" % (label, n), r["out"], want)
                sizes[label] = cluster.call_bytes(r["trace"], 0, "inject", "after")
                shutil.rmtree(r["dir"], ignore_errors=True)
            vrows.append([n, kmax, sizes["cc-dickpt"], sizes["cc-tickpt"], sizes["hand-dickpt"], sizes["hand-tickpt"],
                          "%.3f" % (sizes["cc-tickpt"] / max(1, sizes["cc-dickpt"]))])
        self.write_csv("e4_vector_sizes.csv", ["n", "nodes", "cc_dickpt_bytes", "cc_tickpt_bytes", "hand_dickpt_bytes",
                                               "hand_tickpt_bytes", "tickpt_over_dickpt"], vrows)

    def e5(self, c):
        """000 Table 1: the single-threaded columns we can measure; the multithreaded ones wait."""
        n, k = max(self.cfg["e2_sizes"]), max(self.cfg["nodes"])
        self.progress("experiment 5: single-threaded CAPE vs MPI vs OpenMP, %dx%d, %d nodes" % (n, n, k))
        tc, _, _ = self.cape_run(c, "dickpt", n, k)
        tm, _, _ = self.mpi_run(c, n, k)
        want = self.reference(n)
        to = []
        for _ in range(self.cfg["reps"]):
            o, _, w = run([self.mamult("omp", n), str(n)], env={"OMP_NUM_THREADS": str(os.cpu_count())})
            self.check("OpenMP %d" % n, o, want)
            to.append(w)
        tf = statistics.median(to)
        self.write_csv("e5_table1.csv", ["nodes", "size", "threads", "cape_s", "mpi_s", "openmp_s", "g_percent", "h"],
                       [[k, n, 1, "%.4f" % tc, "%.4f" % tm, "%.4f" % tf, "%.1f" % ((1 - tc / tm) * 100),
                         "%.3f" % (tf / tc)]])

    def e6(self):
        """The monitor's cost: cape_bench_monitor (bench/monitor), built here against this build."""
        self.progress("experiment 6: the monitor's per-page cost and compute-phase overhead (about a minute)")
        victim = self.build("bench-victim", ["gcc", "-O2", "-I", os.path.join(ROOT, "runtime", "include"),
                                             os.path.join(ROOT, "bench", "monitor", "victim.c"), self.libcape,
                                             "-Wl,-z,now"])
        bench = self.build("bench-monitor", ["g++", "-O2", "-std=c++20", '-DCAPE_BIN="%s"' % self.cape,
                                             '-DVICTIM="%s"' % victim,
                                             os.path.join(ROOT, "bench", "monitor", "bench_monitor.cpp")])
        out = run([bench])[0]
        with open(os.path.join(self.out, "e6_bench_monitor.txt"), "w") as f:
            f.write(out)
        pages, compute = [], []
        section = None
        for line in out.splitlines():
            if line.startswith("tracker"):
                section = "pages"
            elif line.startswith("start() of a window"):
                section = None
            elif line.startswith("matmul"):
                section = "compute"
                self.meta["e6_matmul"] = line.strip()
            elif section == "pages" and ("seq" in line or "scatter" in line or "half" in line):
                w = line.split()
                i = next(j for j, x in enumerate(w) if x in ("seq", "scatter", "half"))
                pages.append([" ".join(w[:i]), w[i]] + w[i + 1:i + 4])
            elif section == "compute" and line.strip():
                w = line.split()
                ms = next(j for j, x in enumerate(w) if x == "ms")
                over = w[w.index("overhead") + 1].rstrip("%") if "overhead" in w else "0"
                compute.append([" ".join(w[:ms - 1]), w[ms - 1], over])
        self.write_csv("e6_pages.csv", ["tracker", "order", "touch_us_per_page", "create_us_per_page",
                                        "all_in_us_per_page"], pages)
        self.write_csv("e6_compute.csv", ["tracker", "compute_ms", "overhead_percent"], compute)

    # -- the machine ---------------------------------------------------------------------------

    def machine(self, c):
        cpu = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
        self.meta["machine"] = {
            "cpu": cpu, "cores": os.cpu_count(), "memory_mib": mem, "kernel": platform.release(),
            "load_before": os.getloadavg(), "link": self.a.link, "pinning": c.pinning,
            "mpi": subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
            "gcc": subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
            "commit": subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                                     text=True).stdout.strip(),
        }

    def all(self):
        only = set(int(x) for x in self.a.only.split(",")) if self.a.only else {1, 2, 3, 4, 5, 6}
        with Cluster(max(self.cfg["nodes"]), self.a.link) as c:
            self.machine(c)
            self.progress("cluster %d: %d namespaces, link %s, cores %s" % (c.id, c.nodes, c.link, c.pinning))
            if 1 in only:
                self.e1()
            if only & {2, 3}:
                self.e2_e3(c)
            if 4 in only:
                self.e4(c)
            if 5 in only:
                self.e5(c)
        if 6 in only:
            self.e6()
        self.meta["checks"] = self.checks
        self.meta["seconds"] = time.monotonic() - self.started
        self.meta["load_after"] = os.getloadavg()
        self.meta["experiments"] = sorted(only)
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            json.dump(self.meta, f, indent=1)
        self.progress("done: %d outputs checked against the reference, all identical" % self.checks)


PHASES = ["Init", "Before", "Compute", "Update"]


def _mean(dicts):
    if not dicts:
        return None
    return {k: sum(d[k] for d in dicts) / len(dicts) for k in PHASES}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true", help="the larger sizes (FULL=1)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--link", default="100mbit", choices=["100mbit", "1gbit", "none"])
    p.add_argument("--only", default="", help="experiments to run, e.g. 1,2")
    p.add_argument("--reps", type=int, default=0, help="runs per point (median kept)")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("run.py: the emulated cluster needs root (network namespaces, veth, tc); run make repro as root")
    try:
        Repro(a).all()
    except RunError as e:
        sys.exit("run.py: %s" % e)


if __name__ == "__main__":
    main()
