"""Discovery benchmarks (bench/bench.py, BENCH_ONLY=discovery): N bench advertisers heard by
blectl, the C baseline, bleak and bluetoothctl, live and queued; the clients' RSS baseline."""
import os
import signal
import time

from harness import BLECTL, CBASE, HERE, NS, PY, QUICK, RESULTS, Child, Sim, log, med, save


# ------------------------------------------------------------------ 2. discovery
def is_bench_line(line):
    return b"D0:00:" in line


def is_ctl_new_bench(line):
    return b"NEW" in line and b"Device D0:00:" in line


CLIENTS = {
    "blectl": (lambda: [BLECTL, "scan", "--timeout", "3600"], is_bench_line, signal.SIGINT, False),
    "C": (lambda: [CBASE, "scan", "3600"], is_bench_line, signal.SIGINT, False),
    "bleak": (lambda: [PY, os.path.join(HERE, "bleak", "scan.py"), "3600"], is_bench_line, signal.SIGINT, False),
    "bluetoothctl": (lambda: ["stdbuf", "-oL", "bluetoothctl"], is_ctl_new_bench, signal.SIGTERM, True),
}


def discovery_run(sim, client, n, mode, limit):
    argv, pred, stop_sig, needs_stdin = CLIENTS[client]
    c = Child(argv(), sim.env, stdin=needs_stdin)
    if needs_stdin:
        c.wait_lines(lambda l: b"Agent registered" in l or b"[bluetooth]" in l, 1, time.perf_counter() + 10)
        c.write("scan le\n")
    drain = None
    if mode == "queued":
        # Let the first report arrive, freeze the client, let the sim emit everything into
        # the bus (dbus-daemon queues it), then thaw and time the drain alone.
        c.wait_lines(pred, 1, time.perf_counter() + 30)
        os.kill(c.p.pid, signal.SIGSTOP)
        sim.wait_idle()
        t_cont = time.perf_counter()
        os.kill(c.p.pid, signal.SIGCONT)
        got = c.wait_lines(pred, n, t_cont + limit)
        drain = (time.perf_counter() - t_cont) if got is not None else None
        t_n = got
    else:
        t_n = c.wait_lines(pred, n, time.perf_counter() + limit)
    seen = sum(1 for l in c.lines if pred(l))
    hwm = c.hwm_kb()
    c.finish(stop_sig, timeout=20)
    return {"wall_to_n": t_n, "drain": drain, "cpu": c.cpu, "maxrss_kb": hwm, "seen": seen,
            "complete": t_n is not None}


def bench_discovery():
    log("== discovery")
    reps_for = {100: 5, 2000: 5, 20000: 3, 50000: 1}
    limit_for = {100: 30, 2000: 60, 20000: 120, 50000: 240}
    out = {}
    for n in NS:
        reps = 2 if QUICK else reps_for.get(n, 2)
        sim = Sim(advertisers=n)
        out[n] = {}
        clients = ["blectl", "C", "bleak", "bluetoothctl"]
        rows = {(c, m): [] for c in clients for m in ("live", "queued")}
        for i in range(reps):
            for client in clients:
                modes = ["live", "queued"] if client != "bluetoothctl" else ["live"]
                if client == "bluetoothctl" and n >= 20000 and i > 0:
                    continue  # one (capped) run is enough to show the trend
                for mode in modes:
                    if n >= 2000:
                        sim.wait_idle(quiet=0.3)  # end-of-discovery removals of the last run
                    sim.reset()
                    if n >= 2000:
                        sim.wait_idle(quiet=0.3)  # the previous run's removals are still flowing
                    limit = limit_for.get(n, 240) if client != "bluetoothctl" else min(45, limit_for.get(n, 45))
                    r = discovery_run(sim, client, n, mode, limit)
                    rows[(client, mode)].append(r)
                    log(f"  N={n} {client} {mode}: to_n={r['wall_to_n']} drain={r['drain']} cpu={r['cpu']:.3f}"
                        f" rss={r['maxrss_kb']}KB seen={r['seen']}")
        for (client, mode), rs in rows.items():
            if not rs:
                continue
            complete = [r for r in rs if r["complete"]]
            out[n][f"{client}/{mode}"] = {
                "runs": len(rs), "complete": len(complete),
                "wall_to_n_s": med([r["wall_to_n"] for r in complete]),
                "drain_s": med([r["drain"] for r in complete]),
                "cpu_s": med([r["cpu"] for r in rs]),
                "cpu_per_device_us": med([r["cpu"] / max(1, r["seen"]) * 1e6 for r in rs]),
                "maxrss_kb": med([r["maxrss_kb"] for r in rs]),
                "seen": med([r["seen"] for r in rs]),
            }
        sim.close()
        RESULTS["discovery"] = out
        save()


# baseline RSS: the same clients with no bench advertisers (10 default devices)
def bench_rss_baseline():
    log("== rss baseline")
    sim = Sim()
    out = {}
    for client in ("blectl", "C", "bleak", "bluetoothctl"):
        vals = []
        for _ in range(3):
            sim.reset()
            argv, pred, stop_sig, needs_stdin = CLIENTS[client]
            c = Child(argv(), sim.env, stdin=needs_stdin)
            if needs_stdin:
                c.wait_lines(lambda l: b"Agent registered" in l or b"[bluetooth]" in l, 1, time.perf_counter() + 10)
                c.write("scan le\n")
            c.wait_lines(lambda l: b"C0:FF:EE:00:00:05" in l, 1, time.perf_counter() + 10)
            time.sleep(0.3)
            hwm = c.hwm_kb()
            c.finish(stop_sig)
            vals.append(hwm)
        out[client] = med(vals)
        log(f"  {client}: {out[client]} KB")
    sim.close()
    RESULTS["rss_baseline_kb"] = out
