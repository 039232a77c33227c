"""Issue 12, targets 1 and 2 (BENCH_ONLY=prompt): time to result and loops.

Time to result: process start to the first stdout line, read through a pipe and timestamped
when it arrives (CLOCK_MONOTONIC, the simulator's clock too). The simulator's own part is
Connect received to the moment it had answered everything the result needed: the last
ReadValue reply before the line, or ServicesResolved=true when no read was needed
(blectl get-battery takes Battery1's Percentage). blectl's overhead = time to result minus
that; the simulator's advertisement delay in the scan that finds the device (~60 ms after
StartDiscovery) counts as the simulator's, the rest (process start-up, bus, session) as the
client's.

Loops: five back-to-back get-battery on one device, and one each on five different devices
(the simulator's `battery_devices`: GATT 0x2A19 on each, which both clients read), BlueZ's
2 s disconnect timer on; every result checked; then the time until the simulator shows no
connection left. bleak disconnects as it does by default (waiting for BlueZ's reply).
blectl and bleak interleaved, medians.
"""
import json
import os
import select
import subprocess
import time

PROBE = "C0:FF:EE:00:00:01"
CELLS = ["C0:FF:EE:00:01:%02X" % i for i in range(1, 6)]
CELL_LEVEL = {a: 11 * i for i, a in enumerate(CELLS, 1)}


def first_line(argv, env, limit=60):
    """Runs argv; returns (start, time of the first stdout line, exit time, status, line) on
    CLOCK_MONOTONIC."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    fd = p.stdout.fileno()
    buf, t_line = b"", None
    while t_line is None and time.monotonic() - t0 < limit:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        if b"\n" in buf:
            t_line = time.monotonic()
    rest = p.stdout.read()
    status = p.wait(timeout=limit)
    t_exit = time.monotonic()
    return t0, t_line, t_exit, status, (buf + rest).split(b"\n", 1)[0].decode(errors="replace")


def sim_part(sim, address, t_line):
    """From the simulator's clock: (Connect received, ready, the scan's part): ready is the
    later of ServicesResolved=true and the last ReadValue answered before the line; the scan's
    part is StartDiscovery received to the device object added (the simulated radio's
    advertisement delay, ~60 ms), 0 when the client did not scan."""
    calls = sim.ctl("calls")
    state = sim.ctl("state")
    connects = [c["received_at"] for c in calls if c["member"] == "Connect"]
    reads = [c["answered_at"] for c in calls
             if c["member"] == "ReadValue" and c.get("answered_at") and c["answered_at"] <= t_line]
    starts = [c["received_at"] for c in calls if c["member"] == "StartDiscovery"]
    resolved = state.get("resolved_at", {}).get(address)
    added = state.get("added_at", {}).get(address)
    if not connects or resolved is None:
        return None, None, None
    scan = max(0.0, added - starts[0]) if starts and added is not None else 0.0
    return connects[0], max([resolved] + reads), scan


def check(kind, line, address):
    try:
        j = json.loads(line)
    except ValueError:
        return False
    if kind == "battery":
        return j.get("percentage") == CELL_LEVEL.get(address, 87)
    return j.get("firmware_revision") == "1.4.2"


def bench_prompt(B):
    """B: the bench module (Sim, log, med, save, RESULTS, BLECTL, PY, HERE, QUICK)."""
    B.log("== time to result and loops (issue 12)")
    bleak = os.path.join(B.HERE, "bleak", "oneshot.py")
    out = {}
    sim = B.Sim(disconnect_delay_ms=2000, battery_devices=1)
    cmds = {
        "blectl get-battery": ("battery", [B.BLECTL, "get-battery", PROBE]),
        "bleak get-battery": ("battery", [B.PY, bleak, "battery", PROBE]),
        "blectl get-version": ("version", [B.BLECTL, "get-version", PROBE]),
        "bleak get-version": ("version", [B.PY, bleak, "version", PROBE]),
    }
    reps = 2 if B.QUICK else 7
    rows = {k: [] for k in cmds}
    for i in range(reps):
        for k, (kind, argv) in cmds.items():
            sim.reset()
            t0, t_line, t_exit, status, line = first_line(argv, sim.env)
            ok = status == 0 and t_line is not None and check(kind, line, PROBE)
            connect_at, ready, scan = sim_part(sim, PROBE, t_line or t_exit)
            row = {"ok": ok, "ttr_s": (t_line - t0) if t_line else None, "exit_s": t_exit - t0,
                   "sim_s": (ready - connect_at + scan) if ready else None, "sim_scan_s": scan,
                   "before_connect_s": (connect_at - t0) if connect_at else None,
                   "after_ready_s": (t_line - ready) if (ready and t_line) else None}
            row["overhead_s"] = row["ttr_s"] - row["sim_s"] if row["ttr_s"] is not None and row["sim_s"] is not None else None
            rows[k].append(row)
            B.log(f"  {k}: result {B.fmt(row['ttr_s'], '.3f')} s, exit {row['exit_s']:.3f} s, sim {B.fmt(row['sim_s'], '.3f')} s, "
                  f"ok={ok}")
    ttr = {}
    for k, v in rows.items():
        ttr[k] = {f: B.med([r[f] for r in v if r["ok"]]) for f in
                  ("ttr_s", "exit_s", "sim_s", "sim_scan_s", "overhead_s", "before_connect_s", "after_ready_s")}
        ttr[k]["failures"] = sum(1 for r in v if not r["ok"])
        ttr[k]["runs"] = len(v)
    out["time_to_result"] = ttr

    def loop(argvs):
        """Runs argvs back to back; (total wall, all correct, seconds until no connection left)."""
        sim.reset()
        t0 = time.monotonic()
        ok = True
        for kind, address, argv in argvs:
            _, t_line, _, status, line = first_line(argv, sim.env)
            ok &= status == 0 and check(kind, line, address)
        wall = time.monotonic() - t0
        t1 = time.monotonic()
        while sim.ctl("state")["connections"] and time.monotonic() - t1 < 30:
            time.sleep(0.02)
        return wall, ok, time.monotonic() - t1

    loops = {
        "blectl 5x one device": [("battery", PROBE, [B.BLECTL, "get-battery", PROBE])] * 5,
        "bleak 5x one device": [("battery", PROBE, [B.PY, bleak, "battery", PROBE])] * 5,
        "blectl 5 devices": [("battery", a, [B.BLECTL, "get-battery", a]) for a in CELLS],
        "bleak 5 devices": [("battery", a, [B.PY, bleak, "battery", a]) for a in CELLS],
    }
    lrows = {k: [] for k in loops}
    for i in range(1 if B.QUICK else 3):
        for k, argvs in loops.items():
            wall, ok, clear = loop(argvs)
            lrows[k].append((wall, ok, clear))
            B.log(f"  {k}: {wall:.3f} s, correct={ok}, no link left {clear:.3f} s later")
    out["loops"] = {k: {"wall_s": B.med([r[0] for r in v if r[1]]), "clear_s": B.med([r[2] for r in v if r[1]]),
                        "failures": sum(1 for r in v if not r[1]), "runs": len(v)} for k, v in lrows.items()}
    sim.close()
    B.RESULTS["prompt"] = out
    B.save()


def report(B, L, verdict):
    p = B.RESULTS.get("prompt")
    if not p:
        return
    t = p["time_to_result"]
    L.append("### Time to result (process start to the first stdout line; BlueZ's 2 s disconnect timer on; median)\n")
    L.append("`sim`: the simulator's own time: its advertisement delay in the scan that finds the device "
             "(StartDiscovery received to the device added, `sim scan`) plus Connect received to ServicesResolved / "
             "the last read answered; `overhead` = time to result − sim (process start-up, bus, session, the calls "
             "around them); `before Connect`: process start to Connect received (scan included); `after ready`: the "
             "simulator's last answer to the line on the pipe.\n")
    L.append("| command | ok | result s | exit s | sim s | sim scan ms | overhead ms | before Connect ms | after ready ms |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ms = lambda x: B.fmt(x * 1000 if x is not None else None, ".0f")
    for k, v in t.items():
        L.append(f"| {k} | {v['runs'] - v['failures']}/{v['runs']} | {B.fmt(v['ttr_s'], '.3f')} | {B.fmt(v['exit_s'], '.3f')} | "
                 f"{B.fmt(v['sim_s'], '.3f')} | {ms(v.get('sim_scan_s'))} | {ms(v['overhead_s'])} | {ms(v['before_connect_s'])} | {ms(v['after_ready_s'])} |")
    for what in ("get-battery", "get-version"):
        b, k = t.get(f"blectl {what}", {}), t.get(f"bleak {what}", {})
        r = B.ratio(b.get("ttr_s"), k.get("ttr_s"))
        verdict.append((f"time to result {what} ≤ 0.5x bleak's", r is not None and r <= 0.5, f"{B.fmt(r, '.2f')}x"))
        o = b.get("overhead_s")
        verdict.append((f"time to result {what} within 30 ms of the simulator's connect+resolve+read",
                        o is not None and o <= 0.030, f"{ms(o)} ms"))
    lp = p["loops"]
    L.append("\n### Loops (get-battery back to back, BlueZ's 2 s disconnect timer on; median)\n")
    L.append("| loop | ok | wall s | no link left s after |\n|---|---:|---:|---:|")
    for k, v in lp.items():
        L.append(f"| {k} | {v['runs'] - v['failures']}/{v['runs']} | {B.fmt(v['wall_s'], '.2f')} | {B.fmt(v['clear_s'], '.2f')} |")
    L.append("")
    for what in ("5x one device", "5 devices"):
        r = B.ratio(lp.get(f"blectl {what}", {}).get("wall_s"), lp.get(f"bleak {what}", {}).get("wall_s"))
        verdict.append((f"loop {what}: wall ≤ 0.5x bleak's", r is not None and r <= 0.5, f"{B.fmt(r, '.2f')}x"))
