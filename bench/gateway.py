"""Gateways into an MQTT broker (BENCH_ONLY=gateway; issue 30): a run of S seconds against N
bench advertisers with RSSI churn, each configuration side by side in one run.

Every configuration gets, afresh: a simulator (`advertisers=N rssi_churn=1`: each advertiser's
RSSI changes every 200 ms, so every sighting after the first is RSSI-only), a private
mosquitto (its own loopback port and config file, nothing from /etc, no persistence), a
mosquitto_sub on `bench/#` (QoS 1) writing one line per message to a file, and the gateway
under test for S seconds:

- blectl: `blectl scan --updates --timeout S --mqtt mqtt://127.0.0.1:PORT/bench`, standard
  output to /dev/null (each record is a retained QoS 1 message on
  bench/blectl/ADDRESS/advertisement);
- blectl --min-interval M: the same, thinned (the newest RSSI of each device at most every M s);
- bleak+paho: bench/bleak/gateway.py, the same records on the same topic layout, QoS 1,
  retained, with and without the same throttle;
- Theengs Gateway (PyPI TheengsGateway, BENCH_THEENGS_PYTHON; skipped when unset): continuous
  scanning (`-sd` longer than the run, `-tb 0`), every advertisement published (`-pa 1`),
  Home Assistant discovery off, stopped by SIGINT after S s. It publishes with QoS 0, not
  retained, as it always does;
- decoding: blectl as in the first line against advertisers carrying a BTHome v2 frame
  (service data 0xFCD2, decoded into `decoded`) and against advertisers carrying the same
  11 bytes under 0xFCD3, which no decoder reads (`advertisers_data=bthome|opaque`).

Measured per configuration: the advertisements the simulator signalled while the gateway
scanned (its `sightings`: first sightings and RSSI changes), the messages that reached the
broker on the gateway's device topics (counted by the subscriber after the gateway exits and
the subscriber has drained), the gateway's CPU (user+sys from os.wait4's rusage, start to
exit) in all and per advertisement, its peak RSS (VmHWM, polled), the broker's CPU, and the
gateway's own count of records dropped and not acknowledged (its summary on stderr).
Messages per second are the messages over S. Ratios are of medians within this run.

Environment: BENCH_GATEWAY_N (advertisers, default 2000), BENCH_GATEWAY_SECONDS (S, default
60), BENCH_GATEWAY_MIN_INTERVAL (M, default 5), BENCH_GATEWAY_RUNS (rounds over every
configuration, interleaved; default 2, 1 with BENCH_QUICK), BENCH_THEENGS_PYTHON (a python
with TheengsGateway installed; bench/run makes one).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

TOPIC_PREFIX = "bench"
THEENGS_TOPIC = f"{TOPIC_PREFIX}/theengs"


def settings():
    return {
        "n": int(os.environ.get("BENCH_GATEWAY_N", "2000")),
        "seconds": float(os.environ.get("BENCH_GATEWAY_SECONDS", "60")),
        "min_interval": os.environ.get("BENCH_GATEWAY_MIN_INTERVAL", "5"),
        "runs": int(os.environ.get("BENCH_GATEWAY_RUNS", "1" if os.environ.get("BENCH_QUICK") == "1" else "2")),
        "theengs": os.environ.get("BENCH_THEENGS_PYTHON", ""),
        # Only the decoding rows (skip the gateways against each other): "decoding".
        "only": os.environ.get("BENCH_GATEWAY_ONLY", ""),
        # Another blectl build whose decoding rows run too, interleaved: an A/B of decoding.
        "before": os.environ.get("BENCH_GATEWAY_BEFORE", ""),
    }


def configurations(b, s):
    """(name, the simulator's advertisers_data, argv(port), is a message one of its device
    records, sends SIGINT after S s) for each configuration."""
    seconds = f"{s['seconds']:g}"
    mi = s["min_interval"]

    def blectl(*extra, binary=b.BLECTL):
        return lambda port: [binary, "scan", "--updates", "--timeout", seconds,
                             "--mqtt", f"mqtt://127.0.0.1:{port}/{TOPIC_PREFIX}", "--mqtt-gateway", "blectl", *extra]

    def bleak(*extra):
        return lambda port: [b.PY, os.path.join(b.HERE, "bleak", "gateway.py"), "--port", str(port),
                             "--seconds", seconds, "--prefix", TOPIC_PREFIX, "--gateway", "bleak", *extra]

    def theengs(port):
        conf = os.path.join(b.OUT, "theengsgw.conf")  # it writes its configuration back there
        if os.path.exists(conf):
            os.remove(conf)
        return [s["theengs"], "-m", "TheengsGateway", "-c", conf, "-H", "127.0.0.1", "-P", str(port),
                "-pt", f"{THEENGS_TOPIC}/BTtoMQTT", "-Lt", f"{THEENGS_TOPIC}/LWT",
                "-prt", f"{THEENGS_TOPIC}/presence", "-st", f"{THEENGS_TOPIC}/undecoded",
                "-tt", f"{THEENGS_TOPIC}/trackersync", "-Dt", f"{THEENGS_TOPIC}/discovery",
                "-D", "0", "-pa", "1", "-pr", "0", "-sd", str(int(s["seconds"]) + 3600), "-tb", "0",
                "-ll", "WARNING"]

    record = lambda topic: topic.endswith("/advertisement")
    decoding = [
        ("blectl, BTHome frames (decoded)", "bthome", blectl(), record, False),
        ("blectl, same bytes undecodable", "opaque", blectl(), record, False),
    ]
    if s["before"]:
        decoding += [
            ("before, BTHome frames (decoded)", "bthome", blectl(binary=s["before"]), record, False),
            ("before, same bytes undecodable", "opaque", blectl(binary=s["before"]), record, False),
        ]
    if s["only"] == "decoding":
        return decoding
    out = [
        ("blectl", "", blectl(), record, False),
        (f"blectl --min-interval {mi}", "", blectl("--min-interval", mi), record, False),
        ("bleak+paho", "", bleak(), record, False),
        (f"bleak+paho --min-interval {mi}", "", bleak("--min-interval", mi), record, False),
    ]
    if s["theengs"]:
        out.append(("Theengs Gateway", "", theengs, lambda t: t.startswith(f"{THEENGS_TOPIC}/BTtoMQTT/"), True))
    return out + decoding


# ------------------------------------------------------------------ the broker and its subscriber
def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Broker:
    """A private mosquitto and a mosquitto_sub on bench/# writing `LENGTH TOPIC` per message."""

    def __init__(self, b):
        self.dir = tempfile.mkdtemp(prefix="blectl-gw-bench.")
        self.port = free_port()
        conf = os.path.join(self.dir, "mosquitto.conf")
        with open(conf, "w") as f:
            # No limit on the QoS 1 messages queued for the subscriber: a message that reached the
            # broker must reach the count.
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "max_queued_messages 0\nlog_dest none\n")
        self.broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                                       stderr=open(os.path.join(self.dir, "mosquitto.log"), "w"))
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"bench: mosquitto did not listen on {self.port}")
                time.sleep(0.05)
        self.received = os.path.join(self.dir, "received")
        self.sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1",
                                     "-t", f"{TOPIC_PREFIX}/#", "-F", "%l %t"],
                                    stdout=open(self.received, "w"), stderr=subprocess.DEVNULL)
        # Subscribed once a message published after it started comes through.
        deadline = time.monotonic() + 10
        while not self.lines():
            subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1",
                            "-t", f"{TOPIC_PREFIX}/ping", "-m", "ping"], check=False)
            if time.monotonic() > deadline:
                raise SystemExit("bench: mosquitto_sub did not subscribe")
            time.sleep(0.1)

    def lines(self):
        with open(self.received, "rb") as f:
            return f.read().count(b"\n")

    def drain(self, quiet=1.0, limit=60):
        """Wait until the subscriber's file has not grown for `quiet` seconds."""
        size, since, t0 = -1, time.monotonic(), time.monotonic()
        while time.monotonic() - t0 < limit:
            now = os.path.getsize(self.received)
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.1)

    def messages(self, is_record):
        """(messages on the device topics, their mean payload bytes)."""
        count = total = 0
        with open(self.received, encoding="utf-8", errors="replace") as f:
            for line in f:
                length, _, topic = line.rstrip("\n").partition(" ")
                if is_record(topic):
                    count += 1
                    total += int(length)
        return count, (total / count if count else None)

    def close(self):
        for p in (self.sub, self.broker):
            p.terminate()
        self.sub.wait()
        _, _, ru = os.wait4(self.broker.pid, 0)
        self.broker.returncode = 0
        shutil.rmtree(self.dir, ignore_errors=True)
        return ru.ru_utime + ru.ru_stime


# ------------------------------------------------------------------ one gateway run
def peak_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None


def summary(stderr_path):
    """The gateway's {"event":"mqtt_summary",...} line (blectl's and bench/bleak/gateway.py's)."""
    try:
        for line in open(stderr_path, encoding="utf-8", errors="replace"):
            if '"mqtt_summary"' in line:
                return json.loads(line)
    except (OSError, ValueError):
        pass
    return {}


def run_gateway(b, s, argv_for, data, is_record, interrupt):
    sim = b.Sim(advertisers=s["n"], rssi_churn=1, advertisers_data=data)
    broker = Broker(b)
    try:
        before = sim.ctl("state")["sightings"]
        stderr_path = os.path.join(b.OUT, "gateway.stderr")
        t0 = time.perf_counter()
        p = subprocess.Popen(argv_for(broker.port), env=sim.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=open(stderr_path, "w"), start_new_session=True)
        rss, status, ru = None, None, None
        deadline = t0 + s["seconds"]
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            rss = peak_rss_kb(p.pid) or rss
            now = time.perf_counter()
            if interrupt and now >= deadline:
                os.kill(p.pid, signal.SIGINT)
                interrupt, deadline = False, now + 20
            elif now >= deadline + 30:  # one that does not end: stopped, and its figures kept
                os.killpg(p.pid, signal.SIGKILL)
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.25)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        try:
            os.killpg(p.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
        broker.drain()
        sightings = sim.ctl("state")["sightings"] - before
        messages, payload = broker.messages(is_record)
    finally:
        broker_cpu = broker.close()
        sim.close()
    cpu = ru.ru_utime + ru.ru_stime
    tail = summary(stderr_path)
    return {"status": p.returncode, "wall_s": wall, "cpu_s": cpu, "rss_kb": rss, "sightings": sightings,
            "messages": messages, "payload_bytes": payload, "broker_cpu_s": broker_cpu,
            "dropped": tail.get("dropped"), "unacknowledged": tail.get("unacknowledged"),
            "cpu_per_adv_us": cpu / sightings * 1e6 if sightings else None,
            "cpu_per_message_us": cpu / messages * 1e6 if messages else None}


def bench_gateway(b):
    s = settings()
    missing = [tool for tool in ("mosquitto", "mosquitto_sub", "mosquitto_pub") if not shutil.which(tool)]
    if missing:
        b.log(f"== gateway: skipped, no {', '.join(missing)} (apt-get install mosquitto mosquitto-clients)")
        return
    b.log(f"== gateway: {s['n']} advertisers with RSSI churn, {s['seconds']:g} s, {s['runs']} run(s)"
          + ("" if s["theengs"] else "; no Theengs Gateway (BENCH_THEENGS_PYTHON unset)"))
    configs = configurations(b, s)
    rows = {name: [] for name, *_ in configs}
    for run in range(s["runs"]):
        for name, data, argv_for, is_record, interrupt in configs:
            r = run_gateway(b, s, argv_for, data, is_record, interrupt)
            rows[name].append(r)
            b.log(f"  run {run + 1} {name}: status {r['status']}, {r['sightings']} advertisements, "
                  f"{r['messages']} messages, cpu {r['cpu_s']:.2f} s ({b.fmt(r['cpu_per_adv_us'])} µs/adv), "
                  f"rss {b.fmt(r['rss_kb'] and r['rss_kb'] / 1024)} MB, dropped {r['dropped']}, "
                  f"unacknowledged {r['unacknowledged']}")
    out = {}
    for name, rs in rows.items():
        med = lambda k: b.med([r[k] for r in rs])
        out[name] = {"runs": rs, "statuses": [r["status"] for r in rs],
                     **{k: med(k) for k in ("sightings", "messages", "payload_bytes", "cpu_s", "cpu_per_adv_us",
                                            "cpu_per_message_us", "rss_kb", "broker_cpu_s", "dropped", "unacknowledged")}}
    b.RESULTS["gateway"] = {"settings": {k: v for k, v in s.items() if k not in ("theengs", "before")},
                            "theengs": bool(s["theengs"]), "configurations": out}
    b.save()


# ------------------------------------------------------------------ report
def report(b, L, verdict):
    g = b.RESULTS.get("gateway")
    if not g:
        return
    s, c = g["settings"], g["configurations"]
    seconds = s["seconds"]
    L.append(f"### Gateway: {s['n']:,} advertisers with RSSI churn into a private mosquitto, {seconds:g} s "
             f"(median of {s['runs']})\n")
    L.append("| gateway | advertisements/s | messages/s at the broker | messages/advertisement | payload B | "
             "CPU s | CPU µs/advertisement | CPU µs/message | peak RSS MB | broker CPU s | dropped | unacked |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, v in c.items():
        rss = v["rss_kb"] / 1024 if v["rss_kb"] else None
        L.append(f"| {name} | {b.fmt(v['sightings'] and v['sightings'] / seconds, '.0f')} | "
                 f"{b.fmt(v['messages'] / seconds, '.0f')} | {b.fmt(b.ratio(v['messages'], v['sightings']), '.3f')} | "
                 f"{b.fmt(v['payload_bytes'], '.0f')} | {b.fmt(v['cpu_s'], '.2f')} | {b.fmt(v['cpu_per_adv_us'], '.1f')} | "
                 f"{b.fmt(v['cpu_per_message_us'], '.1f')} | {b.fmt(rss, '.1f')} | {b.fmt(v['broker_cpu_s'], '.2f')} | "
                 f"{b.fmt(v['dropped'], '.0f')} | {b.fmt(v['unacknowledged'], '.0f')} |")
    mi = s["min_interval"]
    per = lambda name: c.get(name, {}).get("cpu_per_adv_us")
    per_message = lambda name: c.get(name, {}).get("cpu_per_message_us")
    rate = lambda name: c.get(name, {}).get("messages")
    ratios = [
        ("blectl / bleak+paho, CPU per advertisement", b.ratio(per("blectl"), per("bleak+paho"))),
        ("per message", b.ratio(per_message("blectl"), per_message("bleak+paho"))),
        (f"blectl / bleak+paho, CPU per advertisement, --min-interval {mi}",
         b.ratio(per(f"blectl --min-interval {mi}"), per(f"bleak+paho --min-interval {mi}"))),
        ("blectl / Theengs Gateway, CPU per advertisement", b.ratio(per("blectl"), per("Theengs Gateway"))),
        # Theengs Gateway publishes one message for each advertisement it handles (-pa 1).
        ("per advertisement handled (Theengs: per message)", b.ratio(per("blectl"), per_message("Theengs Gateway"))),
        (f"blectl, messages with / without --min-interval {mi}",
         b.ratio(rate(f"blectl --min-interval {mi}"), rate("blectl"))),
        (f"blectl, CPU per advertisement with / without --min-interval {mi}",
         b.ratio(per(f"blectl --min-interval {mi}"), per("blectl"))),
        ("before (BENCH_GATEWAY_BEFORE), CPU per advertisement decoding / not decoding",
         b.ratio(per("before, BTHome frames (decoded)"), per("before, same bytes undecodable"))),
        ("blectl / before, CPU per advertisement decoding",
         b.ratio(per("blectl, BTHome frames (decoded)"), per("before, BTHome frames (decoded)"))),
        ("blectl, CPU per advertisement decoding / not decoding",
         b.ratio(per("blectl, BTHome frames (decoded)"), per("blectl, same bytes undecodable"))),
    ]
    L.append("\n" + "; ".join(f"{k}: {b.fmt(v, '.2f')}x" for k, v in ratios if v is not None) + "\n")
    decoding = ratios[-1][1]
    if decoding is not None:
        verdict.append(("gateway: decoding costs ≤ 10 % more CPU per advertisement than not decoding",
                        decoding <= 1.10, f"{decoding:.2f}x"))
