"""Data streams for bench/bench.py (BENCH_ONLY names `streams` and `write_drain`).

streams: notifications in. The simulator notifies the Probe's battery level (0x2A19) at a
fixed rate (`notify_rate_hz`, `notify_rate_total`: value k = k as 4 bytes big-endian) to
`blectl notify ADDR 2a19 --count N` and to the C libdbus client (`cbaseline notify`, one hex
line per value), interleaved, each with a fresh simulator state, each writing to a pipe this
process reads. Every run is checked value by value (1..N, in order: no loss, no repeat); the
receive rate is the lines' arrival at this end of the pipe (first to N-th); CPU is the
client's user+sys for the whole run (connect included) over N. The simulator (dbus-python)
has a ceiling of its own: its state's notify_rate says what it really emitted, and the C
client shows what a libdbus client receives of it.

write_drain: writes out. `blectl write --without-response --file` through AcquireWrite with
the simulated link draining at a set rate (`acquire_write_drain_bps`): the throughput over
the drain rate (target >= 0.9); bench_write in commands.py compares with bleak's loop. The
simulated link takes at most what the client's end of the socket holds (capacity_bytes, about
1.7 KB with the default acquire_write_sndbuf) per 5 ms tick, about 340 KB/s: above that the
link, not the client, is the bound, so the default rates stay below it (131072: the
simulator's default; 262144).
"""
import os
import re
import select
import time

BATTERY = "2a19"
BATTERY_FULL = "00002a19-0000-1000-8000-00805f9b34fb"
VALUE_RE = re.compile(rb'"value":"([0-9a-f]*)"')


def _receive(b, argv, env, n, limit):
    """Runs a client whose stdout is a pipe read here; returns (child, lines, t_first, t_nth)."""
    c = b.Child(argv, env)
    fd = c.p.stdout.fileno()
    buf = bytearray()
    count = 0
    t_first = t_nth = None
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        now = time.perf_counter()
        buf += chunk
        count += chunk.count(b"\n")
        if t_first is None and count >= 1:
            t_first = now
        if t_nth is None and count >= n:
            t_nth = now
    c.finish(timeout=10)
    return c, bytes(buf).split(b"\n")[:-1], t_first, t_nth


def _values(client, lines):
    if client == "blectl":
        out = []
        for line in lines:
            m = VALUE_RE.search(line)
            out.append(m.group(1).decode() if m else None)
        return out
    return [line.decode() for line in lines]


def notify_run(b, sim, argv, n, hz):
    """One client receiving `n` notifications the simulator sends at `hz` (fresh state);
    returns what `_receive` does."""
    sim.reset()
    sim.ctl("fault", "notify_rate_total", str(n))
    sim.ctl("fault", "notify_rate_hz", str(hz))
    return _receive(b, argv, sim.env, n, limit=n / hz * 4 + 60)


def bench_streams(b):
    b.log("== notification streams")
    n = 20_000 if b.QUICK else 100_000
    reps = 1 if b.QUICK else 3
    rates = [int(x) for x in os.environ.get("BENCH_NOTIFY_HZ", "10000").split(",")]
    sim = b.Sim(notify_every_char=BATTERY, disconnect_delay_ms=0)
    clients = {
        "blectl": [b.BLECTL, "notify", b.PROBE, BATTERY, "--count", str(n), "--timeout", "120"],
        "C": [b.CBASE, "notify", b.PROBE, BATTERY_FULL, str(n), "120"],
    }
    expected = ["%08x" % k for k in range(1, n + 1)]
    out = {"n": n, "reps": reps}
    for hz in rates:
        rows = {k: [] for k in clients}
        for _ in range(reps):
            for name, argv in clients.items():
                c, lines, t_first, t_nth = notify_run(b, sim, argv, n, hz)
                emitted = sim.ctl("state").get("notify_rate", {})
                values = _values(name, lines)
                in_order = values == expected
                lost = n - len(set(values) & set(expected))
                rate = (n - 1) / (t_nth - t_first) if t_first and t_nth and t_nth > t_first else None
                sim_rate = emitted["sent"] / emitted["seconds"] if emitted.get("seconds") else None
                row = {"rc": c.status, "lines": len(lines), "in_order": in_order, "lost": lost,
                       "cpu_s": c.cpu, "cpu_per_notification_us": c.cpu / n * 1e6,
                       "receive_hz": rate, "sim_sent": emitted.get("sent"), "sim_hz": sim_rate,
                       "sim_batches": emitted.get("batches"), "hwm_kb": None}
                rows[name].append(row)
                b.log(f"  {hz}/s {name}: rc={c.status} lines={len(lines)} in_order={in_order} lost={lost} "
                      f"cpu={c.cpu:.3f}s ({row['cpu_per_notification_us']:.1f} µs/notification) "
                      f"received {b.fmt(rate, '.0f')}/s, simulator emitted {b.fmt(sim_rate, '.0f')}/s")
        res = {}
        for name, v in rows.items():
            good = [r for r in v if r["in_order"] and r["rc"] == 0]
            res[name] = {"runs": len(v), "ok": len(good),
                         "cpu_per_notification_us": b.med([r["cpu_per_notification_us"] for r in v]),
                         "cpu_s": b.med([r["cpu_s"] for r in v]),
                         "receive_hz": b.med([r["receive_hz"] for r in v]),
                         "sim_hz": b.med([r["sim_hz"] for r in v]),
                         "lost_max": max(r["lost"] for r in v)}
        out[str(hz)] = res
    sim.close()
    b.RESULTS["streams"] = out
    b.save()


def report_streams(b, L, verdict):
    s = b.RESULTS.get("streams")
    if not s:
        return
    L.append(f"### Notification streams ({s['n']} notifications of 0x2A19 at a set rate to a pipe, median of {s['reps']})\n")
    L.append("`received`: lines per second at this end of the pipe (first to last); `simulator`: what the "
             "simulator emitted (its notify_rate); CPU is the client's user+sys for the whole run over N.\n")
    L.append("| rate /s | client | runs ok (all values, in order) | max lost | received /s | simulator /s | CPU s | CPU µs/notification |")
    L.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for hz, rows in s.items():
        if not isinstance(rows, dict):
            continue
        for name, v in rows.items():
            L.append(f"| {hz} | {name} | {v['ok']}/{v['runs']} | {v['lost_max']} | {b.fmt(v['receive_hz'], '.0f')} | "
                     f"{b.fmt(v['sim_hz'], '.0f')} | {b.fmt(v['cpu_s'], '.3f')} | {b.fmt(v['cpu_per_notification_us'], '.1f')} |")
        bl, c = rows.get("blectl", {}), rows.get("C", {})
        r = b.ratio(bl.get("cpu_per_notification_us"), c.get("cpu_per_notification_us"))
        L.append(f"\n{hz}/s: blectl/C CPU per notification {b.fmt(r, '.2f')}x; blectl received "
                 f"{b.fmt(bl.get('receive_hz'), '.0f')}/s of the simulator's {b.fmt(bl.get('sim_hz'), '.0f')}/s "
                 f"(C: {b.fmt(c.get('receive_hz'), '.0f')}/s of {b.fmt(c.get('sim_hz'), '.0f')}/s)\n")
        kept_up = (bl.get("ok") == bl.get("runs") and bl.get("receive_hz") and bl.get("sim_hz")
                   and bl["receive_hz"] >= 0.95 * bl["sim_hz"])
        reached = bl.get("receive_hz") is not None and bl["receive_hz"] >= 0.95 * int(hz)
        verdict.append((f"notify: {hz}/s to a pipe without loss (every run; received ≥ 95% of the rate)",
                        bool(kept_up and reached),
                        f"{bl.get('ok')}/{bl.get('runs')} runs complete, {b.fmt(bl.get('receive_hz'), '.0f')}/s "
                        f"(simulator emitted {b.fmt(bl.get('sim_hz'), '.0f')}/s)"))
        verdict.append((f"notify: CPU per notification ≤ 1.5x the C libdbus client ({hz}/s)",
                        r is not None and r <= 1.5, f"{b.fmt(r, '.2f')}x"))


# ------------------------------------------------------------------ write: the link's drain
ECHO = "C0:FF:EE:00:00:08"
ECHO_SINK = "ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"


def bench_write_drain(b):
    """blectl write --file through AcquireWrite while the simulated link drains at a set rate:
    throughput (bytes over blectl's `seconds`, first read to BlueZ taking the last packet) over
    the drain rate."""
    import json
    import zlib
    b.log("== write --file against the link's drain rate")
    reps = 1 if b.QUICK else 3
    rates = [int(x) for x in os.environ.get("BENCH_DRAIN_BPS", "131072,262144").split(",")]
    out = {"reps": reps}
    path = os.path.join(b.OUT, "write-drain.bin")
    for bps in rates:
        size = max(64 * 1024, bps * 2)  # about two seconds of the link
        data = os.urandom(size)
        crc = "%08x" % zlib.crc32(data)
        with open(path, "wb") as f:
            f.write(data)
        sim = b.Sim(echo_device="true", acquire_write_drain_bps=bps, disconnect_delay_ms=0)
        runs = []
        for _ in range(reps):
            sim.reset()
            wall, cpu, rc, stdout = b.run_once([b.BLECTL, "write", ECHO, ECHO_SINK, "--without-response", "--file", path],
                                               sim.env)
            echo = sim.ctl("state").get("echo", {})
            try:
                record = json.loads(stdout.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                record = {}
            ok = rc == 0 and echo.get("bytes") == size and echo.get("crc32") == crc and record.get("acquired") is True
            seconds = record.get("seconds")
            ratio = size / seconds / bps if ok and seconds else None
            runs.append({"rc": rc, "ok": ok, "seconds": seconds, "ratio": ratio, "cpu_s": cpu})
            b.log(f"  drain {bps} B/s: {size} bytes in {seconds}s rc={rc} ok={ok} throughput/drain {b.fmt(ratio, '.3f')}")
        sim.close()
        out[str(bps)] = {"bytes": size, "runs": reps, "ok": sum(r["ok"] for r in runs),
                         "seconds": b.med([r["seconds"] for r in runs if r["ok"]]),
                         "ratio": b.med([r["ratio"] for r in runs]), "cpu_s": b.med([r["cpu_s"] for r in runs])}
    b.RESULTS["write_drain"] = out
    b.save()


def report_write_drain(b, L, verdict):
    w = b.RESULTS.get("write_drain")
    if not w:
        return
    L.append(f"### write --file against the link's drain rate (AcquireWrite, median of {w['reps']})\n")
    L.append("| drain B/s | bytes | runs ok | transfer s | throughput / drain | CPU s |\n|---:|---:|---:|---:|---:|---:|")
    worst = None
    for bps, v in w.items():
        if not isinstance(v, dict):
            continue
        L.append(f"| {bps} | {v['bytes']} | {v['ok']}/{v['runs']} | {b.fmt(v['seconds'], '.3f')} | "
                 f"{b.fmt(v['ratio'], '.3f')} | {b.fmt(v['cpu_s'], '.3f')} |")
        if v["ratio"] is None or v["ok"] < v["runs"]:
            worst = 0.0
        elif worst is None or v["ratio"] < worst:
            worst = v["ratio"]
    L.append("")
    verdict.append(("write --file throughput ≥ 90% of the link's drain (worst rate)", worst is not None and worst >= 0.9,
                    f"{b.fmt(worst, '.3f')}"))
