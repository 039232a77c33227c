"""Start-up floors (issue 12, target 5): how much of blectl's start-up any Swift program built
the same way pays before doing blectl's work. Registered by bench.py (BENCH_ONLY=floor).

Builds bench/floor/sync.swift and bench/floor/async.swift with the flags `make build` uses
(-O, --static-swift-stdlib, libstdc++ static, metadata accessors instead of mangled names, lld
with packed relative relocations when lld is there), both linking libdbus as blectl does, then times them interleaved with `blectl --version`,
`blectl scan --timeout 0` and the C baseline's `--version` and `objects`:
- floor-sync: a static Swift program that loads the same shared libraries and prints a line
  (the floor for `blectl --version`, which answers before the concurrency runtime starts);
- floor-async: the same with an async main and one hop through a serial Dispatch queue (the
  floor for every command that talks to the bus, before any D-Bus traffic).
Each program's peak resident set size is measured too (bench/c/maxrss.c: the peak of the
command alone, which a Python parent cannot read), the floors of target 4's baseline RSS.
Needs swiftc on PATH (skipped otherwise).
"""
import os
import shutil
import subprocess


def _build(b, name):
    src = os.path.join(b.HERE, "floor", f"{name}.swift")
    out = os.path.join(b.OUT, f"floor-{name}")
    args = ["swiftc", "-O", "-static-stdlib", src, "-o", out, "-ldbus-1",
            "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]
    if name == "async":
        args.insert(2, "-parse-as-library")
    if shutil.which("ld.lld"):
        args += ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    static_cxx = _static_libstdcxx_dir(b)
    if static_cxx:
        args += ["-L", static_cxx]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return out


def _static_libstdcxx_dir(b):
    """A directory holding only libstdc++.a, searched first, as `make build` links it (the
    Makefile's STATIC_CXX); None when the toolchain's clang finds no libstdc++.a."""
    clang = os.path.join(os.path.dirname(os.path.realpath(shutil.which("swiftc"))), "clang")
    try:
        archive = subprocess.run([clang, "-print-file-name=libstdc++.a"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return None
    if not os.path.isabs(archive):
        return None
    directory = os.path.join(b.OUT, "static-libstdc++")
    os.makedirs(directory, exist_ok=True)
    link = os.path.join(directory, "libstdc++.a")
    if not os.path.lexists(link):
        os.symlink(archive, link)
    return directory


def _build_maxrss(b):
    """bench/c/maxrss.c built into bench/out; None without gcc."""
    if not shutil.which("gcc"):
        return None
    out = os.path.join(b.OUT, "maxrss")
    subprocess.run(["gcc", "-O2", "-Wall", "-o", out, os.path.join(b.HERE, "c", "maxrss.c")], check=True)
    return out


def _peak_rss_kb(maxrss, argv, env):
    """The peak resident set size of one run of argv, in KB; None when it failed."""
    run = subprocess.run([maxrss, *argv], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    last = run.stderr.strip().splitlines()[-1:] or [""]
    fields = dict(f.split("=", 1) for f in last[0].split() if "=" in f)
    if run.returncode != 0 or "maxrss_kb" not in fields:
        return None
    return int(fields["maxrss_kb"])


def bench_floor(b):
    b.log("== start-up floors (bench/floor)")
    if not shutil.which("swiftc"):
        b.log("  swiftc missing: skipped")
        return
    sync, asyn = _build(b, "sync"), _build(b, "async")
    sim = b.Sim()
    cmds = {
        "C --version": [b.CBASE, "--version"],
        "floor-sync (static Swift + libdbus, print)": [sync],
        "blectl --version": [b.BLECTL, "--version"],
        "C objects (bus + GetManagedObjects)": [b.CBASE, "objects"],
        "floor-async (+ async main, one Dispatch queue hop)": [asyn],
        "blectl scan --timeout 0": [b.BLECTL, "scan", "--timeout", "0"],
    }
    reps = 11 if b.QUICK else 101
    walls = {k: [] for k in cmds}
    fails = {k: 0 for k in cmds}
    for _ in range(reps):  # interleaved, so load drifts hit every program alike
        for k, argv in cmds.items():
            wall, _cpu, rc, _ = b.run_once(argv, sim.env)
            fails[k] += rc != 0
            walls[k].append(wall)
    maxrss = _build_maxrss(b)
    peaks = {k: [] for k in cmds}
    for _ in range(3 if b.QUICK else 11):
        for k, argv in cmds.items():
            if maxrss:
                peak = _peak_rss_kb(maxrss, argv, sim.env)
                if peak is not None:
                    peaks[k].append(peak)
    sim.close()
    out = {k: {"median_ms": b.med(v) * 1000, "min_ms": min(v) * 1000, "failures": fails[k], "runs": len(v),
               "peak_rss_kb": b.med(peaks[k]) if peaks[k] else None}
           for k, v in walls.items()}
    b.RESULTS["floor"] = out
    b.save()
    for k, v in out.items():
        b.log(f"  {k}: {v['median_ms']:.2f} ms")


def report_lines(b):
    """The section of report.md."""
    r = b.RESULTS.get("floor")
    if not r:
        return []
    c_version = r["C --version"]["median_ms"]
    c_objects = r["C objects (bus + GetManagedObjects)"]["median_ms"]
    lines = ["### Start-up floors (bench/floor; process start to exit, median; peak RSS, median of 11)\n",
             "| program | median ms | min ms | / C --version | / C objects | failures | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for k, v in r.items():
        peak = v.get("peak_rss_kb")
        lines.append(f"| {k} | {v['median_ms']:.2f} | {v['min_ms']:.2f} | {v['median_ms'] / c_version:.2f} | "
                     f"{v['median_ms'] / c_objects:.2f} | {v['failures']}/{v['runs']} | "
                     f"{'–' if peak is None else format(peak / 1024, '.1f')} |")
    lines.append("")
    return lines
