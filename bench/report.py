"""The benchmarks' report (bench/bench.py): the machine, bench/out/report.md with the targets,
bench/discovery.png."""
import os
import platform
import subprocess
import time

import fleet
import floor
import gateway
import instructions
import prompt
import scancost
import streams
from harness import BLECTL, HERE, OUT, PY, RESULTS, ROOT, fmt, log, ratio


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "kernel": platform.release(), "cpu": cpu,
            "cores": os.cpu_count(), "mem_gb": round(mem, 1), "loadavg_start": os.getloadavg(),
            "swift": subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
            if subprocess.run(["which", "swift"], capture_output=True).returncode == 0 else "?",
            "bluetoothctl": subprocess.run(["bluetoothctl", "--version"], capture_output=True, text=True).stdout.strip(),
            "bleak": subprocess.run([PY, "-c", "import importlib.metadata as m; print(m.version('bleak'))"],
                                    capture_output=True, text=True).stdout.strip()}


def code_layout():
    """How much of packaging/symbol-order.txt the measured binary still defines (`make build`
    lays those functions out first; a list gone stale places less code, see the Makefile)."""
    path = os.path.join(ROOT, "packaging", "symbol-order.txt")
    try:
        listed = open(path).read().split()
        out = subprocess.run(["nm", BLECTL], capture_output=True, text=True).stdout
    except OSError:
        return None
    defined = {p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3}
    sections = subprocess.run(["readelf", "-SW", BLECTL], capture_output=True, text=True).stdout
    return {"listed": len(listed), "defined": sum(1 for n in listed if n in defined),
            "helpers_section": ".text.helpers" in sections}


def report(B):
    """B: the bench module, handed on to the report parts of streams, prompt, scancost,
    instructions and floor."""
    R = RESULTS
    L = []
    m = R["machine"]
    L.append(f"Run {m['date']}: {m['cpu']}, {m['cores']} cores (shared), {m['mem_gb']} GB, Linux {m['kernel']}; "
             f"{m['swift']}; bleak {m['bleak']}; bluetoothctl {m['bluetoothctl']}; load average at start "
             f"{', '.join('%.2f' % x for x in m['loadavg_start'])}.\n")
    verdict = []
    lay = R.get("code_layout")
    if lay:
        if lay["helpers_section"]:
            L.append(f"Code layout: {lay['defined']:,} of the {lay['listed']:,} functions packaging/symbol-order.txt lists "
                     f"are in the binary, laid out first; compiler helpers gathered (.text.helpers).\n")
        else:
            L.append("Code layout: none (the binary was linked without the Makefile's ORDER_FLAGS).\n")
    s = R.get("startup")
    if s:
        L.append("### Start-up (process start to exit, median)\n")
        L.append("| command | median ms | min ms | failures |\n|---|---:|---:|---:|")
        for k, v in s.items():
            L.append(f"| {k} | {v['median_ms']:.1f} | {v['min_ms']:.1f} | {v['failures']}/{v['runs']} |")
        r1 = ratio(s["blectl --version"]["median_ms"], s["C --version"]["median_ms"])
        r2 = ratio(s["blectl scan --timeout 0"]["median_ms"], s["C objects (bus + GetManagedObjects)"]["median_ms"])
        r3 = ratio(s["bleak import + BlueZManager (bus + GetManagedObjects)"]["median_ms"],
                   s["blectl scan --timeout 0"]["median_ms"])
        L.append(f"\nblectl/C: --version {r1:.2f}x, bus+GetManagedObjects {r2:.2f}x; bleak/blectl: {r3:.1f}x\n")
        verdict.append(("start-up within 2x of C (bus + GetManagedObjects)", r2 <= 2, f"{r2:.2f}x"))
        verdict.append(("start-up within 2x of C (--version)", r1 <= 2, f"{r1:.2f}x"))
        verdict.append(("start-up ≥10x faster than bleak", r3 >= 10, f"{r3:.1f}x"))
    d = R.get("discovery")
    base = R.get("rss_baseline_kb", {})
    if d:
        L.append("### Discovery (no RSSI churn; N bench advertisers + 10 default devices)\n")
        L.append("`live`: the client runs while the sim emits (wall is bounded by the dbus-python emitter). "
                 "`queued`: the client is SIGSTOPped after its first line, the sim emits everything into "
                 "dbus-daemon's queue, then SIGCONT; `drain` is SIGCONT to the N-th line (the client's own "
                 "throughput). CPU is the client's user+sys for the whole run (start to exit) divided by the "
                 "devices it printed.\n")
        L.append("| N | client | mode | runs ok | wall to N s | drain s | CPU s | CPU µs/device | peak RSS MB | (RSS−baseline)/N bytes |")
        L.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for n, rows in d.items():
            for key, v in rows.items():
                client, mode = key.split("/")
                b = base.get(client)
                per = ratio((v["maxrss_kb"] - b) * 1024, int(n)) if b is not None and v["maxrss_kb"] else None
                L.append(f"| {n} | {client} | {mode} | {v['complete']}/{v['runs']} | {fmt(v['wall_to_n_s'], '.3f')} | "
                         f"{fmt(v['drain_s'], '.3f')} | {fmt(v['cpu_s'], '.3f')} | {fmt(v['cpu_per_device_us'], '.1f')} | "
                         f"{fmt(v['maxrss_kb'] / 1024 if v['maxrss_kb'] else None, '.1f')} | {fmt(per, '.0f')} |")
        L.append(f"\nRSS baseline (same client, 10 default devices only): "
                 + ", ".join(f"{k} {v / 1024:.1f} MB" for k, v in base.items()) + "\n")
        L.append("Ratios (CPU per device, live mode; drain time in queued mode):\n")
        L.append("| N | blectl/C CPU | bleak/blectl CPU | bluetoothctl/blectl CPU | blectl/C drain | bleak/blectl drain |")
        L.append("|---:|---:|---:|---:|---:|---:|")
        worst = {"c": 0, "bleak": None, "ctl": None, "rss": 0}
        for n, rows in d.items():
            g = lambda k, f="cpu_per_device_us": rows.get(k, {}).get(f)
            bc = ratio(g("blectl/live"), g("C/live"))
            bb = ratio(g("bleak/live"), g("blectl/live"))
            cb = ratio(g("bluetoothctl/live"), g("blectl/live"))
            dc = ratio(g("blectl/queued", "drain_s"), g("C/queued", "drain_s"))
            db = ratio(g("bleak/queued", "drain_s"), g("blectl/queued", "drain_s"))
            L.append(f"| {n} | {fmt(bc, '.2f')} | {fmt(bb, '.2f')} | {fmt(cb, '.1f')} | {fmt(dc, '.2f')} | {fmt(db, '.2f')} |")
            if int(n) >= 2000:
                if bc is not None:
                    worst["c"] = max(worst["c"], bc)
                if bb is not None:
                    worst["bleak"] = bb if worst["bleak"] is None else min(worst["bleak"], bb)
                if cb is not None:
                    worst["ctl"] = cb if worst["ctl"] is None else min(worst["ctl"], cb)
                b = base.get("blectl")
                v = rows.get("blectl/live", {}).get("maxrss_kb")
                if b is not None and v:
                    worst["rss"] = max(worst["rss"], (v - b) * 1024 / int(n))
        verdict.append(("discovery CPU/device within 2x of the C drain (N ≥ 2000, worst)", worst["c"] <= 2,
                        f"{worst['c']:.2f}x"))
        if worst["bleak"] is not None:
            verdict.append(("discovery CPU/device ≤ 1/3 of bleak's (N ≥ 2000, worst)", worst["bleak"] >= 3,
                            f"bleak/blectl {worst['bleak']:.2f}x"))
        if worst["ctl"] is not None:
            verdict.append(("discovery CPU/device ≤ 1/10 of bluetoothctl's (N ≥ 2000, worst)", worst["ctl"] >= 10,
                            f"bluetoothctl/blectl {worst['ctl']:.1f}x"))
        verdict.append(("peak RSS < 1 KB per tracked device above baseline (N ≥ 2000, worst)", worst["rss"] < 1024,
                        f"{worst['rss']:.0f} B/device"))
        # issue 12, targets 3 and 4 (bench/scancost.py)
        for row in scancost.discovery_rows(d, base):
            verdict.append(row)
        # scaling
        ns_ = list(d)
        if len(ns_) > 1:
            L.append("\nMarginal CPU per extra device (live), (CPU(N) − CPU(N=%s)) / (N − %s), which removes "
                     "start-up and fixed costs:\n" % (ns_[0], ns_[0]))
            L.append("| N | " + " | ".join(("blectl", "C", "bleak", "bluetoothctl")) + " | blectl/C | bleak/blectl | bluetoothctl/blectl |")
            L.append("|---:|" + "---:|" * 7)
            for n in ns_[1:]:
                mm = {}
                for cl in ("blectl", "C", "bleak", "bluetoothctl"):
                    a = d[n].get(f"{cl}/live", {}).get("cpu_s")
                    b0 = d[ns_[0]].get(f"{cl}/live", {}).get("cpu_s")
                    mm[cl] = (a - b0) / (int(n) - int(ns_[0])) * 1e6 if a is not None and b0 is not None else None
                L.append(f"| {n} | " + " | ".join(fmt(mm[c_], ".1f") + " µs" for c_ in mm) + f" | {fmt(ratio(mm['blectl'], mm['C']), '.2f')} | "
                         f"{fmt(ratio(mm['bleak'], mm['blectl']), '.2f')} | {fmt(ratio(mm['bluetoothctl'], mm['blectl']), '.1f')} |")
        L.append("\n### Scaling: CPU per device relative to the smallest N (live)\n")
        L.append("| client | " + " | ".join(f"N={n}" for n in d) + " | flag |")
        L.append("|---|" + "---:|" * len(d) + "---|")
        for client in ("blectl", "C", "bleak", "bluetoothctl"):
            vals = [d[n].get(f"{client}/live", {}).get("cpu_per_device_us") for n in d]
            b0 = vals[0]
            cells = [fmt(ratio(v, b0), ".2f") for v in vals]
            ns = list(d)
            flag = ""
            # super-linear: per-device cost keeps growing from 2000 up (2000 → largest)
            if "2000" in [str(x) for x in ns]:
                i2 = [str(x) for x in ns].index("2000")
                big = [v for v in vals[i2 + 1:] if v is not None]
                if big and vals[i2] and big[-1] / vals[i2] > 1.5:
                    flag = f"super-linear: {big[-1] / vals[i2]:.1f}x per device from N=2000 to N={ns[-1]}"
            L.append(f"| {client} | " + " | ".join(cells) + f" | {flag} |")
        L.append("\n![discovery](discovery.png)\n")
    o = R.get("oneshot")
    if o:
        L.append("### One-shot commands (process start to exit, fresh simulator state each run)\n")
        L.append("| disconnect delay | command | median wall s | median CPU s | failures |\n|---|---|---:|---:|---:|")
        for delay, rows in o.items():
            for k, v in rows.items():
                if k == "back_to_back":
                    continue
                L.append(f"| {delay} ms | {k} | {v['wall_s']:.3f} | {v['cpu_s']:.3f} | {v['failures']}/{v['runs']} |")
        for delay, rows in o.items():
            rb = ratio(rows["bleak get-battery"]["wall_s"], rows["blectl get-battery"]["wall_s"])
            rc = ratio(rows["bluetoothctl get-battery"]["wall_s"], rows["blectl get-battery"]["wall_s"])
            rv = ratio(rows["bleak get-version"]["wall_s"], rows["blectl get-version"]["wall_s"])
            b2b = rows["back_to_back"]
            b2b_ok = all(x["rc"] == 0 for x in b2b if x["cmd"].startswith("blectl"))
            L.append(f"\ndelay {delay} ms: bleak/blectl get-battery {rb:.2f}x, get-version {rv:.2f}x; "
                     f"bluetoothctl/blectl get-battery {rc:.2f}x. Back-to-back (no reset): "
                     + ", ".join(f"{x['cmd']} {x['wall_s']:.2f}s rc={x['rc']}" for x in b2b) + "\n")
            verdict.append((f"get-battery wall ≤ half of bleak's (disconnect delay {delay} ms)", rb >= 2,
                            f"bleak/blectl {rb:.2f}x"))
            verdict.append((f"two back-to-back get-battery succeed (delay {delay} ms)", b2b_ok,
                            "yes" if b2b_ok else "no"))
    c = R.get("ctrl_c")
    if c:
        L.append("### Ctrl-C: SIGINT to process exit\n")
        L.append("| case | median ms | max ms | exit codes | runs (ready) |\n|---|---:|---:|---|---:|")
        for k, v in c.items():
            L.append(f"| {k} | {fmt(v['median_ms'])} | {v['max_ms']:.1f} | {v['exit_codes']} | {v['runs']} ({v['ready']}) |")
        L.append("")
        for k in ("blectl scan", "blectl connect"):
            v = c[k]
            verdict.append((f"Ctrl-C to exit < 50 ms ({k}, median; max {v['max_ms']:.0f} ms)",
                            v["median_ms"] is not None and v["median_ms"] < 50, f"{fmt(v['median_ms'])} ms"))
        v = c.get("blectl scan, stdout stalled")
        if v:
            # The clean-up budget (400 + 200 ms) with room for a loaded machine.
            verdict.append((f"Ctrl-C to exit with stdout stalled < 1500 ms (median; max {v['max_ms']:.0f} ms)",
                            v["median_ms"] is not None and v["median_ms"] < 1500, f"{fmt(v['median_ms'])} ms"))
    w = R.get("write")
    if w:
        L.append(f"### Write without response ({w['bytes'] // 1024} KiB to the echo device, simulator drain unthrottled, "
                 f"median of {w['reps']})\n")
        L.append("`transfer`: blectl's `seconds` (first read of the file to BlueZ taking the last packet) and the "
                 "bleak script's write loop; `wall` and `CPU` (user+sys) are the client process from start to exit "
                 "(scan, connect, transfer, disconnect).\n")
        L.append("| client | runs ok | packets (MTU) | transfer s | KiB/s | wall s | CPU s |\n|---|---:|---:|---:|---:|---:|---:|")
        for k, v in w.items():
            if not isinstance(v, dict):
                continue
            L.append(f"| {k} | {v['ok']}/{v['runs']} | {v['packets']} ({v['mtu']}) | {fmt(v['transfer_s'], '.3f')} | "
                     f"{fmt(v['kib_per_s'], '.0f')} | {fmt(v['wall_s'], '.2f')} | {fmt(v['cpu_s'], '.2f')} |")
        bleak = w.get("bleak write_gatt_char(response=False)", {}).get("kib_per_s")
        acq = w.get("blectl write --file (AcquireWrite)", {}).get("kib_per_s")
        fb = w.get("blectl write --file (WriteValue command)", {}).get("kib_per_s")
        r1, r2 = ratio(acq, bleak), ratio(fb, bleak)
        L.append(f"\nthroughput blectl/bleak: AcquireWrite {fmt(r1, '.1f')}x, WriteValue command {fmt(r2, '.1f')}x\n")
        verdict.append(("write --file throughput ≥ 2x bleak's write_gatt_char(response=False) loop (AcquireWrite)",
                        r1 is not None and r1 >= 2, f"{fmt(r1, '.1f')}x"))
    streams.report_write_drain(B, L, verdict)
    streams.report_streams(B, L, verdict)
    prompt.report(B, L, verdict)
    fleet.report(B, L, verdict)
    gateway.report(B, L, verdict)
    verdict.extend(scancost.report_rows(B))
    verdict.extend(instructions.report_rows(B))
    L.extend(instructions.report_lines(B))
    L.extend(floor.report_lines(B))
    L.append("### Targets\n")
    L.append("| target | met | value |\n|---|---|---|")
    for name, ok, val in verdict:
        L.append(f"| {name} | {'met' if ok else '**missed**'} | {val} |")
    text = "\n".join(L) + "\n"
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write(text)
    print(text)


def plot():
    d = RESULTS.get("discovery")
    if not d:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        log("bench: no matplotlib; no plot")
        return
    fig, ((a1, a2), (a3, a4)) = plt.subplots(2, 2, figsize=(11, 8.4))
    ns = [int(n) for n in d]
    base = RESULTS.get("rss_baseline_kb", {})
    for client, style in (("blectl", "o-"), ("C", "s-"), ("bleak", "^-"), ("bluetoothctl", "x-")):
        cpu = [d[n].get(f"{client}/live", {}).get("cpu_per_device_us") for n in d]
        pts = [(n, v) for n, v in zip(ns, cpu) if v is not None]
        if pts:
            a1.plot(*zip(*pts), style, label=client)
        dr = [d[n].get(f"{client}/queued", {}).get("drain_s") for n in d]
        pts = [(n, n / v) for n, v in zip(ns, dr) if v]
        if pts:
            a2.plot(*zip(*pts), style, label=client)
        # Memory per tracked device: (peak RSS - the client's own 10-device baseline) / N,
        # live runs that saw all N (N >= 2000: below it the baseline's noise dominates).
        if client in base:
            # d's keys are ints in the run that measured them, strings once read back from
            # results.json (BENCH_MERGE): go by d's own keys.
            pts = [(n, (d[key][f"{client}/live"]["maxrss_kb"] - base[client]) * 1024 / n) for n, key in zip(ns, d)
                   if n >= 2000 and d[key].get(f"{client}/live", {}).get("seen") == n
                   and d[key][f"{client}/live"].get("maxrss_kb")]
            if pts:
                a3.plot(*zip(*pts), style, label=client)
    a1.set(xscale="log", yscale="log", xlabel="devices (N)", ylabel="client CPU µs per device (user+sys)",
           title="Discovery cost (median)")
    a2.set(xscale="log", yscale="log", xlabel="devices (N)", ylabel="devices/s draining a queued backlog",
           title="Discovery throughput (queued drain)")
    a3.axhline(1024, color="grey", linestyle=":", label="target 1 KB")
    a3.set(xscale="log", yscale="log", xlabel="devices (N)", ylabel="bytes of peak RSS per device above baseline",
           title="Memory per tracked device (live)")
    big = [n for n in ns if n >= 2000]
    if big:
        a3.set_xticks(big, [f"{n:,}" for n in big])
        a3.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    for a in (a1, a2, a3):
        a.grid(True, which="both", alpha=0.3)
        a.legend()
    # Time to result: the first stdout line, split into the simulator's own time and the rest.
    ttr = RESULTS.get("prompt", {}).get("time_to_result", {})
    rows = [k for k in ("blectl get-battery", "bleak get-battery", "blectl get-version", "bleak get-version") if k in ttr]
    if rows:
        ys = range(len(rows))
        sim = [ttr[k]["sim_s"] * 1000 for k in rows]
        rest = [(ttr[k]["ttr_s"] - ttr[k]["sim_s"]) * 1000 for k in rows]
        ends = [ttr[k]["exit_s"] * 1000 for k in rows]
        a4.barh(ys, sim, color="#bbbbbb", label="the simulator's own time")
        a4.barh(ys, rest, left=sim, color="#1f77b4", label="the client's time to its result")
        a4.plot(ends, ys, "k|", markersize=14, label="process exit")
        a4.set_yticks(list(ys), rows)
        a4.invert_yaxis()
        a4.set(xlabel="ms from process start (BlueZ's 2 s disconnect timer on)", title="Time to result (median)")
        a4.grid(True, axis="x", alpha=0.3)
        a4.legend(loc="lower right", fontsize="small")
    else:
        a4.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "discovery.png"), dpi=110)
    log("bench: wrote bench/discovery.png")
