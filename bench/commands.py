"""Whole-command benchmarks (bench/bench.py): start-up, one-shot latency, Ctrl-C latency and
write-without-response throughput, each client a process timed from start to exit."""
import fcntl
import json
import os
import re
import select
import signal
import subprocess
import time
import zlib

from harness import (BLECTL, CBASE, HERE, OUT, PROBE, PY, QUICK, RESULTS, Child, Sim, log, med,
                     run_once, save)


# ------------------------------------------------------------------ 1. start-up
def bench_startup():
    log("== start-up")
    reps = 5 if QUICK else 21
    sim = Sim()
    cmds = {
        "blectl --version": [BLECTL, "--version"],
        "C --version": [CBASE, "--version"],
        "blectl scan --timeout 0": [BLECTL, "scan", "--timeout", "0"],
        "C objects (bus + GetManagedObjects)": [CBASE, "objects"],
        "bleak import + BlueZManager (bus + GetManagedObjects)": [PY, os.path.join(HERE, "bleak", "objects.py")],
        "python -c 'import bleak'": [PY, "-c", "import bleak"],
    }
    res = {k: [] for k in cmds}
    fails = {k: 0 for k in cmds}
    for i in range(reps):  # interleaved, so load drifts hit every command alike
        for k, argv in cmds.items():
            wall, cpu, rc, _ = run_once(argv, sim.env)
            if rc != 0:
                fails[k] += 1
            res[k].append(wall)
    sim.close()
    out = {k: {"median_ms": med(v) * 1000, "min_ms": min(v) * 1000, "failures": fails[k], "runs": len(v)}
           for k, v in res.items()}
    RESULTS["startup"] = out
    for k, v in out.items():
        log(f"  {k}: {v['median_ms']:.1f} ms")


# ------------------------------------------------------------------ 3. one-shot latency
CTL_BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"


def bluetoothctl_battery(sim):
    """Scripted bluetoothctl session: scan, connect, select-attribute 0x2A19, read, disconnect."""
    c = Child(["stdbuf", "-oL", "bluetoothctl"], sim.env, stdin=True)
    ok = True

    def expect(pattern, secs=25):
        rx = re.compile(pattern)
        return c.wait_lines(lambda l: rx.search(re.sub(rb"\x1b\[[0-9;]*[A-Za-z]|[\x01\x02\r]", b"", l)) is not None,
                            1, time.perf_counter() + secs) is not None

    ok &= expect(rb"Agent registered|\[bluetooth\]", 10)
    c.write("scan le\n")
    ok &= expect(rb"NEW\] Device " + PROBE.encode())
    c.write("scan off\n")
    c.write(f"connect {PROBE}\n")
    ok &= expect(rb"Connection successful")
    ok &= expect(rb"ServicesResolved: yes")
    c.write(f"menu gatt\nselect-attribute {CTL_BATTERY}\nread\n")
    ok &= expect(rb" 57 +W")
    c.write(f"back\ndisconnect {PROBE}\n")
    ok &= expect(rb"Successful disconnected")
    c.write("quit\n")
    c.p.stdin.close()
    c.finish(None, timeout=10)
    return c.t_exit, c.cpu, (0 if ok else 1)


def bench_oneshot():
    log("== one-shot latency")
    out = {}
    for delay in (2000, 0):
        reps = 2 if QUICK else (3 if delay else 5)
        sim = Sim(disconnect_delay_ms=delay)
        cmds = {
            "blectl get-battery": lambda: run_once([BLECTL, "get-battery", PROBE], sim.env),
            "bleak get-battery": lambda: run_once([PY, os.path.join(HERE, "bleak", "oneshot.py"), "battery", PROBE],
                                                  sim.env),
            "bluetoothctl get-battery": lambda: bluetoothctl_battery(sim),
            "blectl get-version": lambda: run_once([BLECTL, "get-version", PROBE], sim.env),
            "bleak get-version": lambda: run_once([PY, os.path.join(HERE, "bleak", "oneshot.py"), "version", PROBE],
                                                  sim.env),
        }
        res = {k: [] for k in cmds}
        for i in range(reps):
            for k, f in cmds.items():
                sim.reset()
                r = f()
                res[k].append(r)
                log(f"  delay={delay} {k}: {r[0]:.3f}s rc={r[2]}")
        # two back-to-back commands, no reset in between (the second reuses BlueZ's cache)
        sim.reset()
        b2b = []
        for k in ("blectl get-battery", "blectl get-battery", "bleak get-battery", "bleak get-battery"):
            r = cmds[k]()
            b2b.append({"cmd": k, "wall_s": r[0], "rc": r[2]})
            log(f"  back-to-back delay={delay} {k}: {r[0]:.3f}s rc={r[2]}")
        sim.close()
        out[delay] = {k: {"wall_s": med([r[0] for r in v]), "cpu_s": med([r[1] for r in v]),
                          "failures": sum(1 for r in v if r[2] != 0), "runs": len(v)} for k, v in res.items()}
        out[delay]["back_to_back"] = b2b
    RESULTS["oneshot"] = out
    save()


# ------------------------------------------------------------------ 4. Ctrl-C
def sigint_latency(sim, argv, ready):
    c = Child(argv, sim.env)
    ok = ready(c)
    t_sig = time.perf_counter()
    c.finish(signal.SIGINT, timeout=20)
    return (c.t0 + c.t_exit - t_sig), c.status, ok


def stalled_sigint_latency(sim, argv):
    """SIGINT to exit while nobody reads stdout: a one-page pipe (F_SETPIPE_SZ), signalled
    once it takes no more (no POLLOUT on its write end). The tests check the order (blectl
    ends before its reader reads); this measures how long it takes."""
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
    p = subprocess.Popen(argv, env=sim.env, stdout=w, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    full = select.poll()
    full.register(w, select.POLLOUT)
    deadline = time.perf_counter() + 30
    while p.poll() is None and full.poll(0) != [] and time.perf_counter() < deadline:
        time.sleep(0.005)
    ready = p.poll() is None and full.poll(0) == []
    os.close(w)
    t_sig = time.perf_counter()
    try:
        os.kill(p.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    latency = time.perf_counter() - t_sig
    os.close(r)
    return latency, p.returncode, ready


def bench_ctrl_c():
    log("== Ctrl-C")
    reps = 3 if QUICK else 10
    out = {}
    sim = Sim()

    def first_line_then(delay):
        def ready(c):
            got = c.wait_lines(lambda l: PROBE.encode() in l, 1, time.perf_counter() + 15) is not None
            time.sleep(delay)
            return got
        return ready

    for name, argv in (("blectl scan", [BLECTL, "scan", "--timeout", "60"]),
                       ("bleak scan", [PY, os.path.join(HERE, "bleak", "scan.py"), "60"])):
        vals = []
        for _ in range(reps):
            sim.reset()
            vals.append(sigint_latency(sim, argv, first_line_then(0.3)))
        out[name] = vals
    sim.close()

    sim = Sim(connect_never_answers="true")

    def pending_connect(c):
        deadline = time.perf_counter() + 20
        while time.perf_counter() < deadline:
            if sim.ctl("state").get("pending_connects"):
                time.sleep(0.1)
                return True
            time.sleep(0.05)
        return False

    for name, argv in (("blectl connect", [BLECTL, "connect", PROBE, "--timeout", "60"]),
                       ("bleak connect", [PY, os.path.join(HERE, "bleak", "oneshot.py"), "connect", PROBE])):
        vals = []
        for _ in range(reps):
            sim.reset()
            vals.append(sigint_latency(sim, argv, pending_connect))
        out[name] = vals
    sim.close()

    # The stalled-reader case (StalledReaderTests): 2,000 advertisers changing RSSI fill
    # the pipe at once; the clean-up budget is StopDiscovery's 400 ms and 200 ms to drain.
    sim = Sim(advertisers="2000", rssi_churn="true", disconnect_delay_ms="200")
    vals = []
    for _ in range(reps):
        sim.reset()
        vals.append(stalled_sigint_latency(sim, [BLECTL, "scan", "--updates", "--timeout", "60"]))
    out["blectl scan, stdout stalled"] = vals
    sim.close()
    summary = {}
    for k, v in out.items():
        summary[k] = {"median_ms": med([x[0] for x in v if x[2]]) * 1000 if any(x[2] for x in v) else None,
                      "max_ms": max(x[0] for x in v) * 1000, "exit_codes": sorted(set(x[1] for x in v)),
                      "runs": len(v), "ready": sum(1 for x in v if x[2])}
        log(f"  {k}: {summary[k]}")
    RESULTS["ctrl_c"] = summary
    save()


# ------------------------------------------------------------------ 5. write without response
ECHO = "C0:FF:EE:00:00:08"
ECHO_SINK = "ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"


def bench_write():
    """blectl `write --file` (AcquireWrite's socket, and WriteValue type command when the
    simulator refuses AcquireWrite) against a bleak loop of write_gatt_char(response=False)
    on the same characteristic of the echo device, same file, same run. The simulator drains
    the socket as fast as it reads (acquire_write_drain_bps=0), so the clients, the bus and
    the simulator's own handling bound the rate; each run is checked against the simulator's
    record (bytes and CRC-32)."""
    log("== write without response throughput")
    size = (256 if QUICK else 1024) * 1024
    reps = 2 if QUICK else 5
    data = os.urandom(size)
    crc = "%08x" % zlib.crc32(data)
    path = os.path.join(OUT, "write.bin")
    with open(path, "wb") as f:
        f.write(data)
    sim = Sim(echo_device="true", acquire_write_drain_bps=0, disconnect_delay_ms=0)
    blectl = [BLECTL, "write", ECHO, ECHO_SINK, "--without-response", "--file", path]
    cmds = {
        "blectl write --file (AcquireWrite)": (blectl, None),
        "blectl write --file (WriteValue command)": (blectl, "NotSupported"),
        "bleak write_gatt_char(response=False)": ([PY, os.path.join(HERE, "bleak", "write.py"), ECHO, ECHO_SINK, path], None),
    }
    res = {k: [] for k in cmds}
    for _ in range(reps):
        for k, (argv, refusal) in cmds.items():
            sim.reset()
            if refusal:
                sim.ctl("fault", "acquire_write_refused", refusal)
            wall, cpu, rc, out = run_once(argv, sim.env)
            echo = sim.ctl("state").get("echo", {})
            try:
                record = json.loads(out.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                record = {}
            ok = rc == 0 and echo.get("bytes") == size and echo.get("crc32") == crc and record.get("bytes") == size
            seconds = record.get("seconds")
            res[k].append({"wall_s": wall, "cpu_s": cpu, "rc": rc, "ok": ok, "seconds": seconds,
                           "packets": record.get("packets"), "mtu": record.get("mtu"),
                           "acquired": record.get("acquired"), "socket_full": echo.get("socket_full")})
            log(f"  {k}: transfer {seconds}s wall {wall:.2f}s cpu {cpu:.2f}s rc={rc} ok={ok}")
    sim.close()
    out = {"bytes": size, "reps": reps}
    for k, v in res.items():
        good = [r for r in v if r["ok"]]
        transfer = med([r["seconds"] for r in good])
        out[k] = {"runs": len(v), "ok": len(good), "transfer_s": transfer,
                  "kib_per_s": size / 1024 / transfer if transfer else None,
                  "wall_s": med([r["wall_s"] for r in good]), "cpu_s": med([r["cpu_s"] for r in good]),
                  "packets": good[0]["packets"] if good else None, "mtu": good[0]["mtu"] if good else None}
        log(f"  {k}: {out[k]}")
    RESULTS["write"] = out
    save()
