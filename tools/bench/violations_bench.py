#!/usr/bin/env python3
"""What the violation collector and the escaping cost a session that is denied 100,000
writes, each to a distinct target with a long spelling (/usr/lib/./././.../junkN), beside
a reference build of vigil, in one interleaved run (issue 21.7).

  violations_bench.py REF_VIGIL NEW_VIGIL [--rounds 5] [--writes 100000] [--dots 60]
                      [--violations-json]

Each round runs REF then NEW (the order alternates), each `vigil run` of one python3 loop
inside the sandbox, and reads the wall time and the peak RSS of vigil's own process tree
(the supervisor dominates it) from wait4()'s rusage. Prints every round and the medians,
with NEW/REF ratios. --violations-json also asks for the JSON form (--violations-fd to a
file).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

LOOP = r"""
import os, sys
n = int(sys.argv[1])
spelling = "/usr/lib/" + "./" * int(sys.argv[2])
for i in range(n):
    try:
        os.close(os.open(spelling + "junk%d" % i, os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        pass
"""


def one_run(vigil, writes, dots, violations_json, workdir):
    args = [vigil, "run"]
    fds = ()
    if violations_json:
        out = os.open(os.path.join(workdir, "v.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        fds = (out,)
        args += ["--violations-fd", str(out)]
    args += ["--", "python3", "-c", LOOP, str(writes), str(dots)]
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            pass_fds=fds)
    for fd in fds:
        os.close(fd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    if "<sandbox_violations>" not in err:
        sys.exit("%s: no block in its stderr; the run did not go as planned:\n%s" % (vigil, err[-2000:]))
    # wait4's rusage covers vigil and the descendants it waited for; ru_maxrss is the
    # largest single process's peak, in KiB.
    return wall, usage.ru_maxrss / 1024.0, len(err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--writes", type=int, default=100000)
    ap.add_argument("--dots", type=int, default=60, help="'./' repeats in each spelling")
    ap.add_argument("--violations-json", action="store_true")
    a = ap.parse_args()
    res = {"ref": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="vigil-violations-bench-") as work:
        for r in range(a.rounds):
            order = [("ref", a.ref), ("new", a.new)]
            if r % 2:
                order.reverse()
            for name, vigil in order:
                wall, rss, err_bytes = one_run(vigil, a.writes, a.dots, a.violations_json, work)
                res[name].append((wall, rss, err_bytes))
                print("round %d %-3s wall %7.2f s  peak RSS %8.1f MiB  stderr %d bytes"
                      % (r + 1, name, wall, rss, err_bytes), flush=True)
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(m for _, m, _ in v),
               statistics.median(b for _, _, b in v)) for k, v in res.items()}
    print("median ref: %.2f s, %.1f MiB, block %d bytes" % med["ref"])
    print("median new: %.2f s, %.1f MiB, block %d bytes" % med["new"])
    print("new/ref: time %.2fx, peak RSS %.2fx" % (med["new"][0] / med["ref"][0], med["new"][1] / med["ref"][1]))


if __name__ == "__main__":
    main()
