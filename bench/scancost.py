"""`scan --updates` cost per update (issue 12, target 3): blectl against the C libdbus
baseline (`cbaseline scan-updates`: a line per RSSI sighting), on the simulator's
`rssi_churn` (every bench advertiser's RSSI changes every 200 ms).

`live`: the client runs for WINDOW seconds after its first line. `queued`: the client is
SIGSTOPped after its first line for WINDOW/2 seconds (the churn piles up in dbus-daemon's
queue), then runs WINDOW/2 seconds more. CPU is the client's user+sys for the whole run
divided by the update lines it printed (first sightings included). Registered by bench.py
(BENCH_ONLY=updates; sizes from BENCH_UPDATES_N, default 2000).
"""
import os
import signal
import time

WINDOW = 4.0


def _run(b, sim, argv, mode):
    c = b.Child(argv, sim.env)
    first = c.wait_lines(b.is_bench_line, 1, time.perf_counter() + 30)
    if first is None:
        c.finish(signal.SIGINT)
        return None
    if mode == "queued":
        os.kill(c.p.pid, signal.SIGSTOP)
        time.sleep(WINDOW / 2)
        os.kill(c.p.pid, signal.SIGCONT)
        c.wait_lines(lambda l: False, 1, time.perf_counter() + WINDOW / 2)
    else:
        c.wait_lines(lambda l: False, 1, time.perf_counter() + WINDOW)
    hwm = c.hwm_kb()
    c.finish(signal.SIGINT, timeout=20)
    lines = sum(1 for l in c.lines if b.is_bench_line(l))
    return {"cpu": c.cpu, "lines": lines, "cpu_per_update_us": c.cpu / max(1, lines) * 1e6, "maxrss_kb": hwm}


def bench_updates(b):
    b.log("== scan --updates")
    ns = [int(n) for n in os.environ.get("BENCH_UPDATES_N", "2000").split(",")]
    reps = 2 if b.QUICK else 3
    clients = {
        "blectl": [b.BLECTL, "scan", "--updates", "--timeout", "3600"],
        "C": [b.CBASE, "scan-updates", "3600"],
    }
    out = {}
    for n in ns:
        sim = b.Sim(advertisers=n, rssi_churn=1)
        rows = {(c, m): [] for c in clients for m in ("live", "queued")}
        for _ in range(reps):
            for client, argv in clients.items():
                for mode in ("live", "queued"):
                    sim.wait_idle(quiet=0.3, limit=5)
                    sim.reset()
                    r = _run(b, sim, argv, mode)
                    if r:
                        rows[(client, mode)].append(r)
                        b.log(f"  N={n} {client} {mode}: lines={r['lines']} cpu={r['cpu']:.3f}"
                              f" us/update={r['cpu_per_update_us']:.1f}")
        sim.close()
        out[n] = {f"{c}/{m}": {"runs": len(rs), "lines": b.med([r["lines"] for r in rs]),
                               "cpu_per_update_us": b.med([r["cpu_per_update_us"] for r in rs])}
                  for (c, m), rs in rows.items() if rs}
    b.RESULTS["updates"] = out
    b.save()


def report_rows(b):
    """Targets-table rows: blectl/C CPU per update (worst of live and queued)."""
    rows = []
    for n, r in sorted(b.RESULTS.get("updates", {}).items(), key=lambda kv: int(kv[0])):
        ratios = []
        for mode in ("live", "queued"):
            x, c = r.get(f"blectl/{mode}"), r.get(f"C/{mode}")
            if x and c and c["cpu_per_update_us"]:
                ratios.append(x["cpu_per_update_us"] / c["cpu_per_update_us"])
        if ratios:
            worst = max(ratios)
            rows.append((f"scan --updates CPU/update <= 1.5x C (N={n}, worst of live/queued)",
                         worst <= 1.5, f"{worst:.2f}x"))
    return rows


def discovery_rows(d, base):
    """Targets-table rows of issue 12 for discovery (`d`: results per N; `base`: baseline RSS KB)."""
    rows = []
    c_worst, drain_worst, rss_worst = None, None, None
    for n, r in d.items():
        if int(n) < 2000:
            continue
        g = lambda k, f: r.get(k, {}).get(f)
        for mode in ("live", "queued"):
            x, c = g(f"blectl/{mode}", "cpu_per_device_us"), g(f"C/{mode}", "cpu_per_device_us")
            if x and c:
                c_worst = max(c_worst or 0, x / c)
        x, bl = g("blectl/queued", "drain_s"), g("bleak/queued", "drain_s")
        if x and bl:
            drain_worst = bl / x if drain_worst is None else min(drain_worst, bl / x)
        v, b0 = g("blectl/live", "maxrss_kb"), base.get("blectl")
        if int(n) >= 20000 and v and b0 is not None:
            rss_worst = max(rss_worst or 0, (v - b0) * 1024 / int(n))
    if c_worst is not None:
        rows.append(("discovery CPU/device ≤ 1.5x C (N ≥ 2000, live and queued, worst)", c_worst <= 1.5, f"{c_worst:.2f}x"))
    if drain_worst is not None:
        rows.append(("queued drain faster than bleak's (N ≥ 2000, worst)", drain_worst > 1, f"bleak/blectl {drain_worst:.2f}x"))
    if rss_worst is not None:
        rows.append(("peak RSS ≤ 1 KB per tracked device above baseline (N ≥ 20000, worst)", rss_worst <= 1024,
                     f"{rss_worst:.0f} B/device"))
    if base.get("blectl") is not None:
        rows.append(("baseline RSS ≤ 6 MB (blectl scan, 10 devices)", base["blectl"] <= 6 * 1024,
                     f"{base['blectl'] / 1024:.1f} MB"))
    return rows
