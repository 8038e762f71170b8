#!/usr/bin/env python3
"""make repro's output checking (paper-repro/cluster.py): a CAPE job and an MPI job on the
emulated cluster give the sequential program's output, and a wrong output is caught with
both outputs shown. Needs root (namespaces): skipped (77) otherwise.
  check_test.py CAPE CAPE_CC"""
import os
import subprocess
import sys
import tempfile

if os.geteuid() != 0:
    print("SKIPPED: needs root")
    sys.exit(77)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "paper-repro"))
import cluster  # noqa: E402

cape, cape_cc = sys.argv[1:3]
src = os.path.join(root, "paper-repro", "mamult.c")
failures = []
with tempfile.TemporaryDirectory() as d:
    seq, cc, mpi = os.path.join(d, "seq"), os.path.join(d, "cc"), os.path.join(d, "mpi")
    cluster.run(["gcc", "-O2", "-DMAX_N=64", src, "-o", seq])
    cluster.run([cape_cc, "-O2", "-DMAX_N=64", src, "-o", cc])
    cluster.run(["mpicc", "-O2", "-DMAX_N=64", os.path.join(root, "paper-repro", "mamult_mpi.c"), "-o", mpi])
    want = cluster.run([seq, "64"])[0]
    with cluster.Cluster(3, "1gbit") as c:
        r = c.cape(cape, [cc, "64"], 3, d)
        cluster.check_output("CAPE on 3 nodes", r["out"], want)
        ph = cluster.phases(r["trace"])
        if sorted(ph) != [0, 1, 2]:
            failures.append("the job's trace has nodes %s" % sorted(ph))
        if cluster.call_bytes(r["trace"], 0, "wait_for") <= 0:
            failures.append("no bytes merged on the master")
        m = c.mpi(mpi, ["64"], 3, d)
        cluster.check_output("MPI on 3 ranks", m["out"], want)
        if sorted(m["ranks"]) != [0, 1, 2]:
            failures.append("MPI phases from ranks %s" % sorted(m["ranks"]))
        # A wrong result is caught: the reference of another size.
        other = cluster.run([seq, "63"])[0]
        try:
            cluster.check_output("CAPE on 3 nodes", r["out"], other)
            failures.append("a different output passed the check")
        except cluster.RunError as e:
            if "output differs" not in str(e) or "n=64" not in str(e) or "n=63" not in str(e):
                failures.append("the message does not show both outputs: %s" % e)
        # A program that fails is a RunError, not a figure.
        try:
            c.cape(cape, [cc, "100000"], 2, d)
            failures.append("a failing CAPE job was not reported")
        except cluster.RunError:
            pass
    if os.path.exists("/run/cape-cluster/%d" % c.id):
        failures.append("the cluster was not removed")
for f in failures:
    print("FAIL:", f)
if not failures:
    print("output checking OK")
sys.exit(1 if failures else 0)
