#!/usr/bin/env python3
"""Slurm's accounting database as a source: starts tools/slurm-dev-cluster
--accounting (2 nodes x 4 a100-80gb GPUs, slurmdbd and MariaDB) in
$MERIDIAN_SLURM_DIR, runs tools/sacct-history there and checks each sacct row
against what the submitted history implies (the jobs are listed in
tools/sacct-history). The capture stays in the directory as
sacct-history.txt.

The capture is then replayed by $MERIDIAN_BINARY simulate --format sacct
(replay_capture below). `--check FILE` checks and replays a capture made
before (testdata/) without Slurm. When the cluster cannot start, the test
fails with the script's output; nothing is skipped.
"""
import collections
import datetime
import csv
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("MERIDIAN_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLUSTER = os.path.join(SOURCE, "tools", "slurm-dev-cluster")
CAPTURE = os.path.join(SOURCE, "tools", "sacct-history")
NODES, GPUS, GPU_TYPE = 2, 4, "a100-80gb"
FIELDS = ("JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Start,End,Elapsed,Timelimit,State,"
          "ExitCode,AllocTRES,ReqTRES,NodeList,Priority").split(",")
# Rows per job name: the array's three tasks are three allocations, and
# held-cancelled, never eligible, is outside the time window.
EXPECTED_ROWS = {"typed-2gpu": 1, "untyped-1gpu": 1, "two-nodes": 1, "array": 3, "fails": 1,
                 "as-nobody": 1, "cancelled-pending": 1}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def tres(row, column):
    """AllocTRES or ReqTRES as a dict: "cpu=1,gres/gpu=2" -> {"cpu": "1", "gres/gpu": "2"}."""
    return dict(item.split("=", 1) for item in row[column].split(",") if item)


def seconds(elapsed):
    """sacct's Elapsed, [D-]HH:MM:SS, in seconds."""
    days, _, hms = elapsed.rpartition("-")
    h, m, s = (int(x) for x in hms.split(":"))
    return int(days or 0) * 86400 + h * 3600 + m * 60 + s


def check_capture(path):
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines and lines[0].split("|") == FIELDS, "header is %r" % (lines[:1],))
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        values = line.split("|")
        check(len(values) == len(FIELDS), "line %d has %d fields: %r" % (n, len(values), line))
        rows.append(dict(zip(FIELDS, values)))
    by_name = collections.defaultdict(list)
    for r in rows:
        by_name[r["JobName"]].append(r)
    check({k: len(v) for k, v in by_name.items()} == EXPECTED_ROWS,
          "rows per job name: %r, expected %r" % ({k: len(v) for k, v in by_name.items()}, EXPECTED_ROWS))
    ids = [r["JobIDRaw"] for r in rows]
    check(all(i.isdigit() for i in ids) and len(set(ids)) == len(ids), "JobIDRaw not distinct numbers: %r" % ids)

    def one(name):
        return by_name.get(name, [collections.defaultdict(str)])[0]

    for r in rows:
        what = "%s (%s)" % (r["JobName"], r["JobIDRaw"])
        check(r["Partition"] == "gpu" and r["QOS"] == "normal", what + ": partition/QOS " + r["Partition"] + "/" + r["QOS"])
        check(r["End"] not in ("Unknown", "None", ""), what + ": End " + r["End"])
        if r["Start"] == "None":
            continue
        # Elapsed is End - Start, and nothing starts before it was submitted.
        try:
            submit, start, end = (datetime.datetime.fromisoformat(r[k]) for k in ("Submit", "Start", "End"))
        except ValueError as e:
            check(False, what + ": " + str(e))
            continue
        check(submit <= start <= end, what + ": Submit %s, Start %s, End %s" % (submit, start, end))
        check(seconds(r["Elapsed"]) == (end - start).total_seconds(),
              what + ": Elapsed %s for %s..%s" % (r["Elapsed"], start, end))

    typed = one("typed-2gpu")
    alloc = tres(typed, "AllocTRES")
    check(typed["State"] == "COMPLETED" and typed["ExitCode"] == "0:0", "typed-2gpu: %s %s" % (typed["State"], typed["ExitCode"]))
    check(alloc.get("gres/gpu") == "2" and alloc.get("gres/gpu:" + GPU_TYPE) == "2" and alloc.get("node") == "1",
          "typed-2gpu: AllocTRES " + typed["AllocTRES"])
    check((typed["User"], typed["Account"]) == ("root", "research"), "typed-2gpu: %s/%s" % (typed["User"], typed["Account"]))

    untyped = one("untyped-1gpu")
    # Asked untyped; Slurm allocates (and accounts) GPUs of the node's type.
    check("gres/gpu:" + GPU_TYPE not in tres(untyped, "ReqTRES") and tres(untyped, "ReqTRES").get("gres/gpu") == "1",
          "untyped-1gpu: ReqTRES " + untyped["ReqTRES"])
    check(tres(untyped, "AllocTRES").get("gres/gpu") == "1", "untyped-1gpu: AllocTRES " + untyped["AllocTRES"])
    check(untyped["State"] == "COMPLETED" and untyped["Account"] == "inference",
          "untyped-1gpu: %s, account %s" % (untyped["State"], untyped["Account"]))

    two = one("two-nodes")
    alloc = tres(two, "AllocTRES")
    check(two["State"] == "COMPLETED" and alloc.get("node") == "2" and alloc.get("gres/gpu") == "2"
          and two["NodeList"] == "node[1-2]", "two-nodes: %s %s on %s" % (two["State"], two["AllocTRES"], two["NodeList"]))

    for task in by_name.get("array", []):
        check(task["State"] == "COMPLETED" and tres(task, "AllocTRES").get("gres/gpu") == "1",
              "array task %s: %s %s" % (task["JobIDRaw"], task["State"], task["AllocTRES"]))

    fails = one("fails")
    check((fails["State"], fails["ExitCode"]) == ("FAILED", "1:0"), "fails: %s %s" % (fails["State"], fails["ExitCode"]))

    nobody = one("as-nobody")
    check((nobody["User"], nobody["Account"], nobody["State"]) == ("nobody", "inference", "COMPLETED"),
          "as-nobody: %s/%s %s" % (nobody["User"], nobody["Account"], nobody["State"]))

    if "timeout" in by_name:
        late = one("timeout")
        check(late["State"] == "TIMEOUT" and late["Timelimit"] == "00:01:00" and seconds(late["Elapsed"]) >= 60,
              "timeout: %s after %s, limit %s" % (late["State"], late["Elapsed"], late["Timelimit"]))

    pending = one("cancelled-pending")
    check(pending["State"].startswith("CANCELLED") and pending["Start"] == "None" and pending["AllocTRES"] == ""
          and pending["NodeList"] == "None assigned" and pending["Elapsed"] == "00:00:00",
          "cancelled-pending: %s, Start %s, AllocTRES %r, NodeList %s, Elapsed %s"
          % (pending["State"], pending["Start"], pending["AllocTRES"], pending["NodeList"], pending["Elapsed"]))
    return rows


def elapsed_s(text):
    """Slurm's [D-]HH:MM:SS (or MM:SS) in seconds."""
    days, _, clock = text.rpartition("-")
    parts = [int(x) for x in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return (int(days) if days else 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def replay_capture(binary, capture, rows):
    """meridian simulate --format sacct on the capture: every row that started
    is one job of the replay, done on a fleet like the dev cluster, running
    exactly its recorded Elapsed; cancelled-pending never started and is
    counted, not replayed (issue 23)."""
    if not os.access(binary, os.X_OK):
        check(False, "MERIDIAN_BINARY %s is not an executable (build meridian first)" % binary)
        return
    work = tempfile.mkdtemp(prefix="sacct-replay.")
    fleet = os.path.join(work, "fleet.yaml")
    with open(fleet, "w") as f:
        f.write("clusters:\n  - name: dev\n    region: gcp:us-central1\n    gpu_hour_usd: 1.0\n"
                "    nodes:\n      - {count: %d, gpu: A100-80GB, gpus: %d, vcpus: 32, ram_gib: 256}\n"
                "elastic: false\n" % (NODES, GPUS))
    out = os.path.join(work, "sim")
    r = run([binary, "simulate", "--trace", capture, "--format", "sacct", "--fleet", fleet,
             "--policy", "default", "--out", out, "-q"])
    check(r.returncode == 0, "meridian simulate --format sacct exited %d:\n%s" % (r.returncode, r.stdout))
    if r.returncode != 0:
        return
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    sim = summary["policies"][0] if "policies" in summary else summary[0]
    started = {row["JobIDRaw"]: elapsed_s(row["Elapsed"]) for row in rows if row["Start"] != "None"}
    check(sim["jobs"] == len(started), "the replay has %s jobs, the capture %d that started" % (sim["jobs"], len(started)))
    check(sim["jobs_done"] == len(started), "the replay finished %s jobs of %d" % (sim["jobs_done"], len(started)))
    with open(os.path.join(out, "jobs.csv")) as f:
        replayed = {j["job"]: int(j["run_s"]) for j in csv.DictReader(f)}
    check(replayed == started, "run seconds by job: replay %s, sacct Elapsed %s" % (replayed, started))


def main():
    if sys.argv[1:2] == ["--check"]:
        # A capture made with tools/sacct-history --timeout (testdata/), checked
        # as the fresh one is, without Slurm.
        EXPECTED_ROWS["timeout"] = 1
        rows = check_capture(sys.argv[2])
        if not failures:
            replay_capture(os.environ.get("MERIDIAN_BINARY", ""), sys.argv[2], rows)
        print("\n".join(failures) or "%d rows as submitted (%s)" % (len(rows), sys.argv[2]))
        return 1 if failures else 0
    cluster_dir = os.environ.get("MERIDIAN_SLURM_DIR") or tempfile.mkdtemp(prefix="meridian-slurm-acct.")
    capture = os.path.join(cluster_dir, "sacct-history.txt")
    started = run([CLUSTER, "start", "--dir", cluster_dir, "--accounting", "--nodes", str(NODES),
                   "--gpus", str(GPUS), "--gpu-type", GPU_TYPE,
                   "--owner", str(os.getpid())])
    try:
        if started.returncode != 0:
            print("the Slurm dev cluster with accounting did not start:\n" + started.stdout)
            return 1
        r = run([CAPTURE, "--conf", os.path.join(cluster_dir, "slurm.conf"), "-o", capture])
        if r.returncode != 0:
            print("tools/sacct-history failed:\n" + r.stdout)
            return 1
        print(r.stdout, end="")
        rows = check_capture(capture)
        if not failures:
            replay_capture(os.environ.get("MERIDIAN_BINARY", ""), capture, rows)
    finally:
        stopped = run([CLUSTER, "stop", "--dir", cluster_dir])
        check(stopped.returncode == 0, "stop failed:\n" + stopped.stdout)
    if failures:
        print("the capture in %s does not show the submitted history:\n  %s" % (capture, "\n  ".join(failures)))
        with open(capture) as f:
            print(f.read())
        return 1
    print("%d rows as submitted (%s)" % (len(rows), capture))
    return 0


if __name__ == "__main__":
    sys.exit(main())
