"""The benchmarks' shared harness (bench/bench.py and its parts, bench/ab.py): the
environment, the simulator, child processes measured by os.wait4's rusage, the results and
their formatting."""
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import time

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


# ------------------------------------------------------------------ results
def save():
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


def fmt(x, spec=".1f"):
    return "–" if x is None else format(x, spec)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b
