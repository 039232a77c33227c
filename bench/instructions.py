"""Instructions per device of a discovery (issue 12, target 3), counted by valgrind's
callgrind: unlike CPU time, the count does not move with the machine's load, so a change to
the receive path shows its effect in one run on a busy machine.

Each client (blectl `scan`, the C libdbus baseline `cbaseline scan`) runs under callgrind
against the simulator with N1 and then N2 bench advertisers (no RSSI churn), until it has
printed every bench device; then `callgrind_control --dump` writes the counts so far, and
the client gets SIGINT. Instructions per device are the slope (Ir(N2) - Ir(N1)) / (N2 - N1)
of those counts: start-up and bus set-up cancel out.

The stop is counted apart ("stop" below), because it does not cancel out: after StopDiscovery
BlueZ invalidates every device's RSSI and removes the devices it no longer keeps (one
PropertiesChanged and one InterfacesRemoved per device; the simulator does as bluetoothd's
`discovery_cleanup`). blectl's reader goes on receiving those until it closes its
connection, and under callgrind, which slows it some fifty times, that is all of them; the C
client, which blocks for the StopDiscovery reply and then closes, never reads them. Until
the twelfth session's report the slope included the stop, and blectl's figure with it
(304,300 per device, 2.72x C; the discovery alone was 195,800, 1.75x). Registered by bench.py
(BENCH_ONLY=instructions; sizes BENCH_IR_N, default 500,2000). Needs valgrind.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time


def _ir(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def _run(b, sim, argv, n):
    out = tempfile.NamedTemporaryFile(prefix="cg.", suffix=".out", delete=False).name
    c = b.Child(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], sim.env)
    got = c.wait_lines(b.is_bench_line, n, time.perf_counter() + 300)
    dumped = None
    if got is not None:
        # The counts until now, in `out`.1 (callgrind numbers its dumps; the rest goes to `out`).
        r = subprocess.run(["callgrind_control", f"--dump=discovery", str(c.p.pid)],
                           capture_output=True, text=True, timeout=120)
        deadline = time.perf_counter() + 60
        while r.returncode == 0 and time.perf_counter() < deadline:
            dumped = _ir(out + ".1") if os.path.exists(out + ".1") else None
            if dumped is not None:
                break
            time.sleep(0.1)
    c.finish(signal.SIGINT, timeout=60)
    seen = sum(1 for l in c.lines if b.is_bench_line(l))
    rest = _ir(out) if got is not None else None
    for path in (out, out + ".1"):
        if os.path.exists(path):
            os.unlink(path)
    return {"ir": dumped, "stop_ir": rest if dumped is not None else None, "seen": seen}


def bench_instructions(b):
    b.log("== instructions per device (callgrind)")
    if not shutil.which("valgrind"):
        b.log("  valgrind missing: skipped (apt-get install valgrind)")
        return
    n1, n2 = (int(x) for x in os.environ.get("BENCH_IR_N", "500,2000").split(","))
    clients = {
        "blectl": [b.BLECTL, "scan", "--timeout", "3600"],
        "C": [b.CBASE, "scan", "3600"],
    }
    runs = {}
    for n in (n1, n2):
        sim = b.Sim(advertisers=n)
        for client, argv in clients.items():
            sim.wait_idle(quiet=0.3, limit=60)
            sim.reset()
            sim.wait_idle(quiet=0.3, limit=60)
            r = _run(b, sim, argv, n)
            runs[(client, n)] = r
            b.log(f"  N={n} {client}: Ir={r['ir']} (stop {r['stop_ir']}) seen={r['seen']}")
        sim.close()
    out = {"sizes": [n1, n2]}
    for client in clients:
        a, z = runs[(client, n1)]["ir"], runs[(client, n2)]["ir"]
        sa, sz = runs[(client, n1)]["stop_ir"], runs[(client, n2)]["stop_ir"]
        out[client] = {"ir": [a, z], "per_device": (z - a) / (n2 - n1) if a and z else None,
                       "stop_ir": [sa, sz], "stop_per_device": (sz - sa) / (n2 - n1) if sa and sz else None}
    b.RESULTS["instructions"] = out
    b.save()
    x, c = out["blectl"]["per_device"], out["C"]["per_device"]
    if x and c:
        b.log(f"  per device: blectl {x:,.0f}, C {c:,.0f}: {x / c:.2f}x")
    s = out["blectl"]["stop_per_device"], out["C"]["stop_per_device"]
    if s[0] is not None and s[1] is not None:
        b.log(f"  stop, per device: blectl {s[0]:,.0f}, C {s[1]:,.0f}")


def report_rows(b):
    """Targets-table row: blectl/C instructions per device."""
    r = b.RESULTS.get("instructions")
    if not r or not r.get("blectl", {}).get("per_device") or not r.get("C", {}).get("per_device"):
        return []
    ratio = r["blectl"]["per_device"] / r["C"]["per_device"]
    n1, n2 = r["sizes"]
    return [(f"discovery instructions/device <= 1.5x C (callgrind, slope N={n1}..{n2})", ratio <= 1.5, f"{ratio:.2f}x")]


def report_lines(b):
    """The section of report.md."""
    r = b.RESULTS.get("instructions")
    if not r:
        return []
    n1, n2 = r["sizes"]
    lines = [f"### Instructions per device (callgrind; slope between N={n1} and N={n2})\n",
             "Counted until the client has printed every device; the stop (StopDiscovery, and "
             "what the client still reads of BlueZ's clean-up signals before it exits) apart.\n",
             "| client | Ir at N1 | Ir at N2 | instructions/device | stop, instructions/device |",
             "|---|---:|---:|---:|---:|"]
    for client in ("blectl", "C"):
        x = r.get(client, {})
        ir = x.get("ir") or [None, None]
        per = x.get("per_device")
        stop = x.get("stop_per_device")
        lines.append(f"| {client} | {ir[0]:,} | {ir[1]:,} | {f'{per:,.0f}' if per else '-'} | "
                     f"{f'{stop:,.0f}' if stop is not None else '-'} |"
                     if ir[0] and ir[1] else f"| {client} | - | - | - | - |")
    lines.append("")
    return lines
