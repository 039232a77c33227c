#!/usr/bin/python3
"""What the -v hook costs when off: blectl's CPU for draining N queued devices (bench.py's
"queued" mode), the binary before the trace was added against the one after, without -v,
with -v and with -vv (stderr to /dev/null). Usage (release builds of each commit):

    bench/trace_cost.py BEFORE_BLECTL AFTER_BLECTL [N=20000] [REPS=5]

The client is stopped after its first line, the simulator queues the rest in dbus-daemon,
and the CPU (utime+stime from /proc) is taken from SIGCONT to the N-th line. Medians of
interleaved runs; the machine's load makes only the ratios mean anything.
"""
import os, subprocess, sys, time, statistics, signal
BEFORE, AFTER = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
REPS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim")
env = dict(os.environ)
p = subprocess.Popen([SIM + "/bluez-sim", "--spawn-bus", "--set", f"advertisers={N}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = p.stdout.readline(); assert line.startswith("ADDRESS="), line
env["DBUS_SYSTEM_BUS_ADDRESS"] = line.strip().split("=", 1)[1]
TCK = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK
variants = {
  "before": [BEFORE],
  "after, no -v": [AFTER],
  "after, -v": [AFTER, "-v"],
  "after, -vv": [AFTER, "-vv"],
}
res = {k: [] for k in variants}
for r in range(REPS):
    for name, argv in variants.items():
        subprocess.run([SIM + "/simctl", "reset"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        time.sleep(2)
        c = subprocess.Popen(argv + ["scan", "--timeout", "120"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        c.stdout.readline()
        os.kill(c.pid, signal.SIGSTOP)
        time.sleep(6)  # the simulator puts the rest in dbus-daemon's queue
        before = cpu(c.pid)
        t0 = time.perf_counter()
        os.kill(c.pid, signal.SIGCONT)
        n = 1
        while n < N + 10:
            if not c.stdout.readline(): break
            n += 1
        drain = time.perf_counter() - t0
        used = cpu(c.pid) - before
        c.send_signal(signal.SIGINT); c.wait()
        res[name].append((used, n, drain))
        print(f"rep {r} {name}: drain cpu {used:.2f}s wall {drain:.2f}s devices {n}", flush=True)
p.stdin.close(); p.terminate(); p.wait()
base = statistics.median(x[0] for x in res["before"])
print("| variant | drain CPU s (median) | min | max | devices | µs/device | vs before |")
for name, xs in res.items():
    c_ = statistics.median(x[0] for x in xs); dev = statistics.median(x[1] for x in xs)
    print(f"| {name} | {c_:.2f} | {min(x[0] for x in xs):.2f} | {max(x[0] for x in xs):.2f} | {dev:.0f} | {c_/dev*1e6:.1f} | {c_/base:.2f} |")
