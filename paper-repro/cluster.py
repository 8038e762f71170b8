"""Running programs for `make repro`: natively, as CAPE jobs and as MPI jobs on the emulated
cluster (cluster.sh), every output kept for checking (run.py checks it against the sequential
program's before any figure is reported)."""

import json
import os
import secrets
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SH = os.path.join(HERE, "cluster.sh")
AGENT = os.path.join(HERE, "netns-agent.sh")


# Seconds of silence after which a node is dead (cape's default is 5). The emulated nodes share
# a few loaded cores behind rate-limited links: a 4-node job at load 12 once lost a node to the
# 5 s default in the middle of a region (a heartbeat late, not a node gone).
NODE_TIMEOUT = 30


class RunError(Exception):
    pass


def run(argv, env=None, timeout=1800, cwd=None):
    """Runs argv; returns (stdout, stderr, wall seconds). Raises RunError on failure."""
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RunError("%s exited with %d:\n%s" % (" ".join(argv), p.returncode, p.stderr[-3000:]))
    return p.stdout, p.stderr, wall


def check_output(what, got, want):
    """A run's output is the reference's, or RunError says how they differ."""
    if got != want:
        raise RunError("%s: output differs from the reference\n  got:  %r\n  want: %r" % (what, got, want))


def free_cluster_id():
    for i in range(101, 201):
        if not os.path.exists("/run/cape-cluster/%d" % i):
            return i
    raise RunError("no free cluster id in /run/cape-cluster/101..200 (cluster.sh down ID removes one)")


class Cluster:
    """N network namespaces on one bridge (cluster.sh). A context manager: removed on exit."""

    def __init__(self, nodes, link):
        self.nodes, self.link = nodes, link
        self.id = free_cluster_id()
        self.jobs = 0

    def __enter__(self):
        run([CLUSTER_SH, "up", str(self.id), str(self.nodes), "--link", self.link])
        with open("/run/cape-cluster/%d/pinning" % self.id) as f:
            self.pinning = f.read().strip()
        return self

    def __exit__(self, *exc):
        subprocess.run([CLUSTER_SH, "down", str(self.id)], check=False)

    def ip(self, k):
        return "10.77.%d.%d" % (self.id, k + 1)

    def exec_prefix(self, k):
        return [CLUSTER_SH, "exec", str(self.id), str(k)]

    def cape(self, cape_bin, argv, nodes, workdir, tracker="uffd", timeout=1800):
        """A CAPE job of `nodes` nodes (`cape node` in each namespace, as under mpirun: docs/net.md).
        Returns dict(out, err, wall, trace) with the merged trace events."""
        if nodes > self.nodes:
            raise RunError("a %d-node job on a %d-node cluster" % (nodes, self.nodes))
        self.jobs += 1
        job = "repro-%d-%d" % (os.getpid(), self.jobs)
        d = os.path.join(workdir, job)
        os.makedirs(d, exist_ok=True)
        secret = os.path.join(d, "secret")
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.close(fd)
        epoch = str(time.time_ns() // 1000)
        common = ["--master", "%s:7777" % self.ip(0), "--size", str(nodes), "--job", job, "--secret-file", secret,
                  "--output-dir", os.path.join(d, "logs"), "--tracker", tracker, "--trace",
                  os.path.join(d, "trace.%r.json"), "--trace-epoch", epoch, "--connect-timeout", "120",
                  "--timeout", str(NODE_TIMEOUT)]
        slaves = []
        for k in range(1, nodes):
            slaves.append(subprocess.Popen(self.exec_prefix(k) + [cape_bin, "node", "--rank", str(k)] + common +
                                           ["--"] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           text=True))
        try:
            out, err, wall = run(self.exec_prefix(0) + [cape_bin, "node", "--rank", "0"] + common + ["--"] + argv,
                                 timeout=timeout)
        except (RunError, subprocess.TimeoutExpired) as e:
            for s in slaves:
                s.kill()
            raise RunError("CAPE job failed: %s" % e)
        for s in slaves:
            try:
                s.wait(timeout=60)
            except subprocess.TimeoutExpired:
                s.kill()
        events = []
        for k in range(nodes):
            path = os.path.join(d, "trace.%d.json" % k)
            if os.path.exists(path):
                with open(path) as f:
                    events += json.load(f)["traceEvents"]
        return {"out": out, "err": err, "wall": wall, "trace": events, "dir": d}

    def mpi(self, exe, args, nodes, workdir, timeout=1800):
        """An MPI job: one rank per namespace, started through netns-agent.sh."""
        hostfile = os.path.join(workdir, "hosts.%d" % nodes)
        with open(hostfile, "w") as f:
            for k in range(nodes):
                f.write("%s slots=1\n" % self.ip(k))
        net = "10.77.%d.0/24" % self.id
        argv = ["mpirun", "--allow-run-as-root", "-n", str(nodes), "--hostfile", hostfile,
                "--mca", "plm_rsh_agent", AGENT, "--mca", "oob_tcp_if_include", net,
                "--mca", "btl_tcp_if_include", net, "--mca", "btl", "self,tcp", exe] + args
        out, err, wall = run(argv, timeout=timeout)
        ranks = {}
        for line in err.splitlines():
            w = line.split()
            if len(w) >= 11 and w[0] == "mamult-mpi":
                ranks[int(w[2])] = {"Init": float(w[4]), "Before": float(w[6]), "Compute": float(w[8]),
                                    "Update": float(w[10]), "bytes": int(w[12]) if len(w) >= 13 else 0}
        return {"out": out, "err": err, "wall": wall, "ranks": ranks}


def phases(events):
    """Per node: seconds in each phase (summed over regions), from a job's trace events."""
    per = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "phase":
            p = per.setdefault(e["pid"], {"Init": 0.0, "Before": 0.0, "Compute": 0.0, "Update": 0.0})
            p[e["name"]] += e["dur"] / 1e6
    return per


def call_bytes(events, pid, name, checkpoint=None):
    """Bytes of node pid's calls `name` (of checkpoint `checkpoint`), summed."""
    return sum(e["args"].get("bytes", 0) for e in events
               if e.get("ph") == "X" and e.get("cat") == "call" and e["pid"] == pid and e["name"] == name
               and (checkpoint is None or e["args"].get("checkpoint") == checkpoint))
