"""blectl benchmarks against the simulated BlueZ (driven by bench/run).

Every client is a child of this process; its CPU (user+sys) and peak RSS come from
os.wait4's rusage, wall times from time.perf_counter. Medians of REPS runs; ratios are
computed within this one run (the machine is shared: never compare absolute numbers
across runs). Results: bench/out/results.json, bench/out/report.md, bench/discovery.png.
"""
import fcntl
import json
import os
import platform
import re
import select
import signal
import statistics
import subprocess
import sys
import time
import zlib

import prompt
import scancost
import instructions
import floor  # bench/floor.py: start-up floors of Swift programs built as blectl is
import streams  # bench/streams.py: notification streams, write --file against the link's drain

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
BLECTL = os.environ["BLECTL"]
CBASE = os.environ["CBASELINE"]
PY = os.environ["BENCH_PYTHON"]
QUICK = os.environ.get("BENCH_QUICK") == "1"
NS = [int(n) for n in os.environ.get("BENCH_N", "100,2000,20000,50000").split(",")]
PROBE = "C0:FF:EE:00:00:01"
RESULTS = {}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ------------------------------------------------------------------ simulator
class Sim:
    def __init__(self, **faults):
        args = [os.path.join(ROOT, "sim", "bluez-sim"), "--spawn-bus"]
        for k, v in faults.items():
            args += ["--set", f"{k}={v}"]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(OUT, "sim.log"), "a"), text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ADDRESS="):
            raise SystemExit(f"bench: simulator did not start ({line!r}); see bench/out/sim.log")
        self.address = line.strip().split("=", 1)[1]
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)

    def ctl(self, *args, tries=3):
        for _ in range(tries - 1):  # a sim busy removing 50k devices can miss the 25 s reply timeout
            r = subprocess.run([os.path.join(ROOT, "sim", "simctl"), "--address", self.address, *args],
                               capture_output=True, text=True, timeout=120)
            if r.returncode == 0:
                return json.loads(r.stdout) if r.stdout.strip() else None
            self.wait_idle()
        r = subprocess.run([os.path.join(ROOT, "sim", "simctl"), "--address", self.address, *args],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"bench: simctl {args}: {r.stderr}")
        return json.loads(r.stdout) if r.stdout.strip() else None

    def reset(self):
        self.ctl("reset")

    def cpu_ticks(self):
        with open(f"/proc/{self.p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def wait_idle(self, quiet=0.4, limit=300):
        """Wait until the sim has used no CPU for `quiet` seconds (its emitter is done)."""
        t0 = time.perf_counter()
        last, since = self.cpu_ticks(), time.perf_counter()
        while time.perf_counter() - t0 < limit:
            time.sleep(0.1)
            now = self.cpu_ticks()
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= quiet:
                return time.perf_counter() - t0
        return None

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()
            self.p.wait()


# ------------------------------------------------------------------ children
class Child:
    """A child with stdout piped to us, counted line by line; rusage from wait4."""

    def __init__(self, argv, env, stdin=False):
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  start_new_session=True)
        self.buf = b""
        self.lines = []
        self.rusage = None
        self.status = None
        self.t_exit = None

    def write(self, text):
        self.p.stdin.write(text.encode())
        self.p.stdin.flush()

    def pump(self, timeout):
        """Read what is available (waiting up to timeout); False at EOF."""
        fd = self.p.stdout.fileno()
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return True
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return False
        self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        self.lines.extend(done)
        return True

    def wait_lines(self, pred, count, deadline):
        """Until `count` lines satisfy pred; returns the time (since start) or None."""
        n = sum(1 for l in self.lines if pred(l))
        seen = len(self.lines)
        while n < count and time.perf_counter() < deadline:
            if not self.pump(min(0.2, max(0.0, deadline - time.perf_counter()))):
                break
            n += sum(1 for l in self.lines[seen:] if pred(l))
            seen = len(self.lines)
        return time.perf_counter() - self.t0 if n >= count else None

    def finish(self, sig=None, timeout=30):
        if sig is not None and self.status is None:
            try:
                os.kill(self.p.pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.perf_counter() + timeout
        fd = self.p.stdout.fileno()
        while True:
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(self.p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(self.p.pid, 0)
                break
            r, _, _ = select.select([fd], [], [], 0.002)
            if r:
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    self.buf += chunk
        self.t_exit = time.perf_counter() - self.t0
        self.p.returncode = os.waitstatus_to_exitcode(status)
        self.status = self.p.returncode
        self.rusage = ru
        try:
            os.killpg(self.p.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
        return self

    def hwm_kb(self):
        """Peak RSS of the running child (VmHWM). ru_maxrss is not used: on Linux it keeps the
        forked pre-exec image of this Python driver (~14 MB) as a floor."""
        try:
            with open(f"/proc/{self.p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            return None

    @property
    def cpu(self):
        return self.rusage.ru_utime + self.rusage.ru_stime

    @property
    def maxrss_kb(self):
        return self.rusage.ru_maxrss


def run_once(argv, env):
    """Process start to exit: (wall s, cpu s, exit status, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode, out


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


# ------------------------------------------------------------------ output
def save():
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


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


def fmt(x, spec=".1f"):
    return "–" if x is None else format(x, spec)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def report():
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
    streams.report_write_drain(sys.modules[__name__], L, verdict)
    streams.report_streams(sys.modules[__name__], L, verdict)
    prompt.report(sys.modules[__name__], L, verdict)
    verdict.extend(scancost.report_rows(sys.modules[__name__]))
    verdict.extend(instructions.report_rows(sys.modules[__name__]))
    L.extend(instructions.report_lines(sys.modules[__name__]))
    L.extend(floor.report_lines(sys.modules[__name__]))
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


def main():
    os.makedirs(OUT, exist_ok=True)
    # A bench started in the background by a non-interactive shell inherits SIGINT ignored,
    # and every client would inherit that: Python (bleak) then never sees Ctrl-C, and the
    # Ctrl-C and discovery runs wait out their 20 s limit for it. A handler here is reset to
    # the default in each child at exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.environ.get("BENCH_MERGE") == "1" and os.path.exists(os.path.join(OUT, "results.json")):
        RESULTS.update(json.load(open(os.path.join(OUT, "results.json"))))  # add to an earlier run
    else:
        RESULTS["machine"] = machine()
        RESULTS["code_layout"] = code_layout()
    only = os.environ.get("BENCH_ONLY", "startup,discovery,oneshot,ctrlc,write,write_drain,streams,prompt,updates,instructions,floor").split(",")
    if "startup" in only:
        bench_startup()
    if "discovery" in only:
        bench_rss_baseline()
        bench_discovery()
    if "oneshot" in only:
        bench_oneshot()
    if "ctrlc" in only:
        bench_ctrl_c()
    if "write" in only:
        bench_write()
    if "prompt" in only:
        prompt.bench_prompt(sys.modules[__name__])
    if "updates" in only:
        scancost.bench_updates(sys.modules[__name__])
    if "instructions" in only:
        instructions.bench_instructions(sys.modules[__name__])
    if "floor" in only:
        floor.bench_floor(sys.modules[__name__])
    if "write_drain" in only:
        streams.bench_write_drain(sys.modules[__name__])
    if "streams" in only:
        streams.bench_streams(sys.modules[__name__])
    RESULTS["machine"]["loadavg_end"] = os.getloadavg()
    save()
    plot()
    report()


if __name__ == "__main__":
    main()
