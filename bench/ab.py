"""Two blectl builds side by side (a profile before and after each change), with the C
libdbus baseline in the same run, interleaved so that load drifts hit all three alike.

    bench/ab.py BEFORE AFTER [startup,live,queued,notify,instructions,notify-instructions,updates,rss]

BEFORE and AFTER are release blectl binaries (`make build`, then copy the binary; or
`swift build -c release ... --scratch-path DIR` at two commits). Needs CBASELINE (the C
baseline, `gcc -O2 -o cbaseline bench/c/cbaseline*.c $(pkg-config --cflags --libs dbus-1)`)
and BENCH_PYTHON (the venv bench/run makes). Each measure prints one line per run, then
medians and the ratios AFTER/BEFORE and AFTER/C:
- startup: process start to exit of `--version` and `scan --timeout 0` (C: `--version`,
  `objects`), 41 runs (AB_STARTUP_RUNS);
- live, queued: a discovery of 20,000 advertisers (AB_N) as bench.py's discovery measures it
  (live: the client reads while the simulator emits; queued: the client is stopped while
  dbus-daemon queues everything, then drains); CPU (user+sys) and context switches
  (voluntary + involuntary, rusage) per device, 3 runs (AB_RUNS);
- notify: 50,000 notifications at 10,000/s (AB_NOTIFY_N, AB_NOTIFY_HZ) to a pipe; CPU and
  context switches per notification, every value checked in order;
- instructions: callgrind instructions per device (bench/instructions.py's slope between
  500 and 2,000 advertisers) and instructions of `--version` and `scan --timeout 0`; these do
  not move with the machine's load.
- notify-instructions (not in the default list): callgrind instructions per notification,
  the slope between `notify --count 1000` and `--count 5000` at 2,000/s (the C client the
  same), every value checked in order.
- updates (not in the default list): `scan --updates` CPU per update line (C: `scan-updates`),
  live and queued, as bench/scancost.py measures it, AB_UPDATES_N advertisers (2,000) with
  their RSSI changing every 200 ms;
- rss (not in the default list): target 4's baseline, `scan`'s peak RSS (VmHWM) with the 10
  default devices as bench.py reads it, and the peak RSS of `--version` and `scan --timeout 0`
  (bench/c/maxrss.c), 11 runs (AB_RSS_RUNS).
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("BLECTL", "unused")
import bench  # noqa: E402
import streams  # noqa: E402

RUNS = int(os.environ.get("AB_RUNS", "3"))
N = int(os.environ.get("AB_N", "20000"))


def median(xs):
    return bench.med(xs) if xs else None


def report(title, rows, unit):
    print(f"-- {title} (median; {unit})")
    b, a, c = (median(rows[k]) for k in ("before", "after", "C"))
    for k, v in (("before", b), ("after", a), ("C", c)):
        print(f"   {k:6s} {v:.4g}" if v is not None else f"   {k:6s} -")
    if a and b:
        print(f"   after/before {a / b:.2f}x")
    if a and c:
        print(f"   after/C {a / c:.2f}x   before/C {b / c:.2f}x" if b else f"   after/C {a / c:.2f}x")


def startup(builds):
    runs = int(os.environ.get("AB_STARTUP_RUNS", "41"))
    sim = bench.Sim()
    commands = {}
    for name, path in builds.items():
        commands[(name, "--version")] = [path, "--version"]
        commands[(name, "bus")] = [path, "scan", "--timeout", "0"]
    commands[("C", "--version")] = [bench.CBASE, "--version"]
    commands[("C", "bus")] = [bench.CBASE, "objects"]
    walls = {k: [] for k in commands}
    for _ in range(runs):
        for key, argv in commands.items():
            wall, _, rc, _ = bench.run_once(argv, sim.env)
            if rc == 0:
                walls[key].append(wall * 1000)
    sim.close()
    for what in ("--version", "bus"):
        report(f"start-up {what} ({runs} runs)", {n: walls[(n, what)] for n in ("before", "after", "C")}, "ms")


def rss(builds):
    """Target 4's baseline: `scan`'s VmHWM with the simulator's 10 default devices, read as
    bench.py's baseline reads it (after the fifth device's line, 0.3 s on); and the peak RSS of
    `--version` and `scan --timeout 0` (C: `--version`, `objects`) through bench/c/maxrss.c."""
    import floor
    maxrss = floor._build_maxrss(bench)
    runs = int(os.environ.get("AB_RSS_RUNS", "11"))
    sim = bench.Sim()
    scans = {"before": [], "after": [], "C": []}
    peaks = {(n, w): [] for n in ("before", "after", "C") for w in ("--version", "bus")}
    for _ in range(runs):
        for name in ("before", "after", "C"):
            sim.reset()
            argv = [builds[name], "scan", "--timeout", "60"] if name != "C" else [bench.CBASE, "scan", "60"]
            c = bench.Child(argv, sim.env)
            seen = c.wait_lines(lambda l: b"C0:FF:EE:00:00:05" in l, 1, time.perf_counter() + 10)
            time.sleep(0.3)
            hwm = c.hwm_kb() if seen is not None else None
            c.finish(signal.SIGINT)
            if hwm is not None:  # a scan that ended or never saw the fifth device is no sample
                scans[name].append(hwm / 1024)
            for what in ("--version", "bus"):
                if name == "C":
                    argv = [bench.CBASE, "--version" if what == "--version" else "objects"]
                else:
                    argv = [builds[name], "--version"] if what == "--version" else [builds[name], "scan", "--timeout", "0"]
                peak = floor._peak_rss_kb(maxrss, argv, sim.env) if maxrss else None
                if peak is not None:
                    peaks[(name, what)].append(peak / 1024)
    sim.close()
    report(f"peak RSS of scan, 10 devices ({runs} runs)", scans, "MB")
    for what in ("--version", "bus"):
        report(f"peak RSS, {what} ({runs} runs)", {n: peaks[(n, what)] for n in ("before", "after", "C")}, "MB")


def discovery(builds, mode):
    rows = {"before": [], "after": [], "C": []}
    switches = {"before": [], "after": [], "C": []}
    for _ in range(RUNS):
        for name in ("before", "after", "C"):
            if name != "C":
                bench.CLIENTS["blectl"] = (lambda p=builds[name]: [p, "scan", "--timeout", "3600"],
                                           bench.is_bench_line, signal.SIGINT, False)
            sim = bench.Sim(advertisers=N)
            result = bench.discovery_run(sim, "blectl" if name != "C" else "C", N, mode, 240)
            sim.close()
            usage = LAST_RUSAGE[0]
            cs = (usage.ru_nvcsw + usage.ru_nivcsw) / N
            print(f"   {mode} {name}: seen {result['seen']} cpu {result['cpu']:.3f} s (user {usage.ru_utime:.3f}, "
                  f"sys {usage.ru_stime:.3f}), {cs:.2f} switches/device", flush=True)
            if result["seen"] >= N:
                rows[name].append(result["cpu"] / N * 1e6)
                switches[name].append(cs)
    report(f"discovery {mode}, {N} devices: CPU", rows, "µs per device")
    report(f"discovery {mode}, {N} devices: context switches", switches, "per device")


def notify(builds):
    n = int(os.environ.get("AB_NOTIFY_N", "50000"))
    hz = int(os.environ.get("AB_NOTIFY_HZ", "10000"))
    sim = bench.Sim(notify_every_char=streams.BATTERY, disconnect_delay_ms=0)
    clients = {name: [path, "notify", bench.PROBE, streams.BATTERY, "--count", str(n), "--timeout", "120"]
               for name, path in builds.items()}
    clients["C"] = [bench.CBASE, "notify", bench.PROBE, streams.BATTERY_FULL, str(n), "120"]
    expected = ["%08x" % k for k in range(1, n + 1)]
    rows = {k: [] for k in clients}
    switches = {k: [] for k in clients}
    for _ in range(RUNS):
        for name, argv in clients.items():
            c, lines, _, _ = streams.notify_run(bench, sim, argv, n, hz)
            ok = streams._values("blectl" if name != "C" else "C", lines) == expected
            cs = (c.rusage.ru_nvcsw + c.rusage.ru_nivcsw) / n
            print(f"   notify {name}: rc {c.status}, all {n} in order: {ok}, cpu {c.cpu:.3f} s, {cs:.2f} switches/notification", flush=True)
            if ok:
                rows[name].append(c.cpu / n * 1e6)
                switches[name].append(cs)
    sim.close()
    report(f"notify, {n} at {hz}/s: CPU", rows, "µs per notification")
    report(f"notify, {n} at {hz}/s: context switches", switches, "per notification")


def instructions(builds):
    import instructions as ir
    sizes = (500, 2000)
    per_device = {}
    for name in ("before", "after", "C"):
        argv = [builds[name], "scan", "--timeout", "3600"] if name != "C" else [bench.CBASE, "scan", "3600"]
        counts = []
        for n in sizes:
            sim = bench.Sim(advertisers=n)
            counts.append(ir._run(bench, sim, argv, n)["ir"])
            sim.close()
        per_device[name] = [(counts[1] - counts[0]) / (sizes[1] - sizes[0])] if None not in counts else []
    report("instructions per device (callgrind, slope 500 -> 2,000)", per_device, "instructions")
    sim = bench.Sim()
    for what, argv_of in (("--version", lambda p: [p, "--version"]), ("bus", lambda p: [p, "scan", "--timeout", "0"])):
        totals = {}
        for name in ("before", "after", "C"):
            argv = argv_of(builds[name]) if name != "C" else [bench.CBASE, "--version" if what == "--version" else "objects"]
            out = tempfile.NamedTemporaryFile(prefix="cg.", delete=False).name
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                           env=sim.env, capture_output=True)
            totals[name] = [ir._ir(out)]
            os.unlink(out)
        report(f"instructions, {what}", totals, "instructions")
    sim.close()


def notify_instructions(builds):
    import instructions as ir
    sizes, hz = (1000, 5000), 2000
    sim = bench.Sim(notify_every_char=streams.BATTERY, disconnect_delay_ms=0)
    per_value = {}
    for name in ("before", "after", "C"):
        counts = []
        for n in sizes:
            argv = ([builds[name], "notify", bench.PROBE, streams.BATTERY, "--count", str(n), "--timeout", "300"]
                    if name != "C" else [bench.CBASE, "notify", bench.PROBE, streams.BATTERY_FULL, str(n), "300"])
            out = tempfile.NamedTemporaryFile(prefix="cg.", delete=False).name
            c, lines, _, _ = streams.notify_run(bench, sim, ["valgrind", "--tool=callgrind", "--dump-instr=no",
                                                             f"--callgrind-out-file={out}", *argv], n, hz)
            ok = streams._values("C" if name == "C" else "blectl", lines) == ["%08x" % k for k in range(1, n + 1)]
            print(f"   notify-instructions {name} {n}: rc {c.status}, all in order: {ok}", flush=True)
            counts.append(ir._ir(out) if ok else None)
            os.unlink(out)
        per_value[name] = [(counts[1] - counts[0]) / (sizes[1] - sizes[0])] if None not in counts else []
    sim.close()
    report(f"instructions per notification (callgrind, slope {sizes[0]:,} -> {sizes[1]:,} at {hz}/s)", per_value, "instructions")


def updates(builds):
    import scancost
    n = int(os.environ.get("AB_UPDATES_N", "2000"))
    sim = bench.Sim(advertisers=n, rssi_churn=1)
    clients = {name: [path, "scan", "--updates", "--timeout", "3600"] for name, path in builds.items()}
    clients["C"] = [bench.CBASE, "scan-updates", "3600"]
    for mode in ("live", "queued"):
        rows = {k: [] for k in clients}
        for _ in range(RUNS):
            for name, argv in clients.items():
                sim.wait_idle(quiet=0.3, limit=5)
                sim.reset()
                r = scancost._run(bench, sim, argv, mode)
                if r:
                    print(f"   updates {mode} {name}: {r['lines']} lines, cpu {r['cpu']:.3f} s", flush=True)
                    rows[name].append(r["cpu_per_update_us"])
        report(f"scan --updates {mode}, {n} advertisers: CPU", rows, "µs per update")
    sim.close()


LAST_RUSAGE = [None]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    # Both binaries copied afresh, so that both are whole in the page cache: peak RSS counts
    # the cached neighbours fault-around maps, and an older file, partly evicted, looked
    # 0.6 MB smaller than a fresh copy of the same bytes (BENCHMARKS.md, "Two builds side by side").
    fresh = tempfile.mkdtemp(prefix="ab-builds-")
    atexit.register(shutil.rmtree, fresh, True)
    builds = {}
    for name, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
        builds[name] = os.path.join(fresh, f"blectl-{name}")
        shutil.copy2(os.path.abspath(path), builds[name])
    only = (sys.argv[3] if len(sys.argv) > 3 else "startup,live,queued,notify,instructions").split(",")
    os.makedirs(bench.OUT, exist_ok=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    finish = bench.Child.finish

    def finish_and_keep(self, *args, **kwargs):
        done = finish(self, *args, **kwargs)
        LAST_RUSAGE[0] = self.rusage
        return done
    bench.Child.finish = finish_and_keep
    print(f"before {sys.argv[1]}\nafter  {sys.argv[2]}\n(copied afresh to {fresh})\nC      {bench.CBASE}")
    for measure in only:
        if measure == "startup":
            startup(builds)
        elif measure in ("live", "queued"):
            discovery(builds, measure)
        elif measure == "notify":
            notify(builds)
        elif measure == "instructions":
            instructions(builds)
        elif measure == "notify-instructions":
            notify_instructions(builds)
        elif measure == "rss":
            rss(builds)
        elif measure == "updates":
            updates(builds)
        else:
            sys.exit(f"unknown measure {measure}")


if __name__ == "__main__":
    main()
