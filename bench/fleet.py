"""Fleets (BENCH_ONLY=fleet): a battery sweep of N devices, three ways side by side.

The simulator runs `fleet=N` with LE connections created one at a time (`le_connect_serial`),
`connect_latency_ms`, `le_max_links` and `disconnect_delay_ms` at their defaults (100 ms,
7 links, 2 s), then again without the link cap (BENCH_FLEET_SIM). Each repetition runs, in turn:

- fleet: `blectl get-battery --parallel W ADDRESS...` (one process);
- shell loop: `for a; do blectl get-battery "$a" 2>&1; done` (one process per device,
  one after the other; a failure's error object goes to the same stream as a result; a
  connection failure, exit status 1, tried again up to five times: see SHELL_LOOP);
- bleak: bench/bleak/fleet.py, `asyncio.gather` under an `asyncio.Semaphore(W)`.

Each finds its devices, connects, reads Battery Level and disconnects. Between two forms
the simulator waits until every link is down and is reset (every device forgotten), so each
form starts cold. Wall: process start to exit; CPU: user+sys of the whole process tree
(wait4's rusage of bench/c/maxrss.c, which waits for the command, which waits for its own
children); peak RSS: the largest of any process of the tree (maxrss.c). Every device must
get exactly one line in every form (its result, or an error line), and every result must
be the device's level (`i % 101`): the run stops otherwise. Failures (error lines) are
counted and shown.

The floor: the earliest the last device can have its result, given the simulator's
settings: connections created one at a time, `connect_latency_ms` each, in turn; a link
counts against `le_max_links` from its creation until it is down, that is the services'
resolution (150 ms after the Connect reply) plus BlueZ's disconnect timer
(`disconnect_delay_ms`) at least; the result is known at the resolution (blectl reads
Battery1). Without a link cap that is N x connect_latency_ms + 150 ms; with one, creation
waits for a free link (see `floor_s`). The advertisement delay of the discovery (~60 ms) is
added, as no form can connect before it.

Environment: BENCH_FLEET_N (sizes, default 10,50), BENCH_FLEET_PARALLEL (W, default 4,
blectl's default), BENCH_FLEET_RUNS (repetitions, default 3; 1 with BENCH_QUICK),
BENCH_FLEET_SIM (configurations of the simulator, `;`-separated, each `NAME=VALUE,...` added
to the above; default `;le_max_links=0`: the defaults, then without the link cap, whose
floor is the serialized connections' alone).
"""
import collections
import json
import os
import subprocess
import tempfile
import time

import floor

RESOLVE_S = 0.150  # the simulator: ServicesResolved 150 ms after the Connect reply
SCAN_S = 0.060  # the simulator: first reports ~60 ms after StartDiscovery
# A sweep as a script writes it: one blectl per device, one after the other, a failure's error
# object on the same stream as a result; a device whose connection failed (exit status 1,
# such as the link cap's le-connection-abort-by-local) tried again half a second later, up to
# five times, so that the loop, like bleak, loses no device to the cap.
SHELL_LOOP = """blectl=$1; shift
for a; do
    tries=1
    while line=$("$blectl" get-battery "$a" 2>&1); [ $? -eq 1 ] && [ $tries -lt 5 ]; do
        tries=$((tries + 1)); sleep 0.5
    done
    printf '%s\\n' "$line"
done"""


def address(i):
    return "C0:FF:EE:F1:%02X:%02X" % (i >> 8, i & 255)


def sim_settings(sim):
    """The simulator's settings that make the floor, from its own state and fault table."""
    table = sim.ctl("faults")
    set_now = sim.ctl("state")["faults"]
    value = lambda name: set_now.get(name, table[name]["default"])
    return {"serial": bool(value("le_connect_serial")), "latency_s": value("connect_latency_ms") / 1000,
            "max_links": value("le_max_links"), "disconnect_s": value("disconnect_delay_ms") / 1000}


def floor_s(n, s):
    """The last device's result at the earliest: creation j starts when creation j-1 has
    ended (serialized) and, with a cap of L links, when link j-L is down (its end + the
    resolution + the disconnect timer); its result comes at its end + the resolution."""
    ends = []
    for j in range(n):
        start = ends[-1] if ends and s["serial"] else 0.0
        if s["max_links"] and j >= s["max_links"]:
            start = max(start, ends[j - s["max_links"]] + RESOLVE_S + s["disconnect_s"])
        ends.append(start + s["latency_s"])
    return SCAN_S + max(ends) + RESOLVE_S


def run(argv, env, maxrss):
    """One run through maxrss: (wall s, CPU s of the tree, peak RSS KB, exit status, stdout lines)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([maxrss, *argv], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        last = (err.read().decode(errors="replace").strip().splitlines() or [""])[-1]
        fields = dict(f.split("=", 1) for f in last.split() if "=" in f)
        lines = [l for l in out.read().decode(errors="replace").splitlines() if l.strip()]
    return wall, ru.ru_utime + ru.ru_stime, int(fields.get("maxrss_kb", 0)) or None, int(fields.get("status", -1)), lines


def check_lines(form, lines, n):
    """Every device exactly one line, every result its level: (successes, failures by reason)."""
    seen = collections.Counter()
    ok, failures = 0, collections.Counter()
    for line in lines:
        j = json.loads(line)
        error = j.get("error")
        where = j.get("address") or (error.get("address") if isinstance(error, dict) else None)
        seen[where] += 1
        if error is None:
            i = int(where.replace(":", "")[-4:], 16)
            assert j.get("percentage") == i % 101, f"fleet bench, {form}: {where} read {j.get('percentage')}, not {i % 101}"
            ok += 1
        else:
            reason = error.get("message", "") if isinstance(error, dict) else str(error)
            failures[reason.rsplit(": ", 1)[-1][:60]] += 1
    wanted = collections.Counter(address(i) for i in range(1, n + 1))
    assert seen == wanted, (f"fleet bench, {form}: not one line per device: missing "
                            f"{sorted(wanted - seen)}, extra {sorted(seen - wanted)}")
    return ok, dict(failures)


def creations(sim):
    """The simulator's LE connection creations of the run: count by result, first start to
    last end, and the share of that span a creation was under way."""
    made = sim.ctl("state")["le_creations"]
    started = [c for c in made if c.get("start") is not None and c.get("end") is not None]
    if not started:
        return {"by_result": {}, "span_s": None, "busy": None}
    span = max(c["end"] for c in started) - min(c["start"] for c in started)
    busy = sum(c["end"] - c["start"] for c in started)
    return {"by_result": dict(collections.Counter(c["result"] for c in made)), "span_s": span,
            "busy": busy / span if span else None}


def settle(sim, limit=15):
    """Until no link is up, nothing is being created or queued; then a reset."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        le = sim.ctl("state")["le_connect"]
        if not le["links"] and not le["creating"] and not le["queued"]:
            break
        time.sleep(0.2)
    sim.reset()
    sim.wait_idle(quiet=0.3, limit=10)


def configurations():
    """BENCH_FLEET_SIM: simulator settings beyond the defaults, one configuration per `;`-separated
    entry of `NAME=VALUE,...` (an empty entry: the defaults)."""
    spec = os.environ.get("BENCH_FLEET_SIM", ";le_max_links=0")
    return [dict(kv.split("=", 1) for kv in entry.split(",") if kv) for entry in spec.split(";")]


def sweep(b, maxrss, n, width, reps, extra):
    """One size in one configuration: every form `reps` times, interleaved."""
    sim = b.Sim(fleet=n, le_connect_serial=1, **extra)
    try:
        settings = sim_settings(sim)
        addrs = [address(i) for i in range(1, n + 1)]
        forms = {
            "fleet": [b.BLECTL, "get-battery", "--parallel", str(width), *addrs],
            "shell loop": ["sh", "-c", SHELL_LOOP, "sh", b.BLECTL, *addrs],
            "bleak": [b.PY, os.path.join(b.HERE, "bleak", "fleet.py"), str(width), "20", *addrs],
        }
        runs = {k: [] for k in forms}
        for rep in range(reps):
            for form, argv in forms.items():  # interleaved: load drifts hit every form alike
                settle(sim)
                wall, cpu, rss, status, lines = run(argv, sim.env, maxrss)
                ok, failures = check_lines(form, lines, n)
                made = creations(sim)
                runs[form].append({"wall_s": wall, "cpu_s": cpu, "rss_kb": rss, "status": status, "ok": ok,
                                   "failures": failures, "creations": made})
                b.log(f"  {extra or 'defaults'} n={n} {form}: {wall:.2f}s cpu={cpu:.2f}s rss={rss}KB ok={ok}/{n} "
                      f"status={status} creations={made['by_result']} failures={failures}")
    finally:
        sim.close()
    return {"floor_s": floor_s(n, settings), "settings": settings,
            "forms": {form: {"wall_s": b.med([r["wall_s"] for r in rs]), "cpu_s": b.med([r["cpu_s"] for r in rs]),
                             "rss_kb": b.med([r["rss_kb"] for r in rs]), "ok": min(r["ok"] for r in rs),
                             "link_limit": b.med([r["creations"]["by_result"].get("link-limit", 0) for r in rs]),
                             "connect_span_s": b.med([r["creations"]["span_s"] for r in rs]),
                             "connector_busy": b.med([r["creations"]["busy"] for r in rs]),
                             "runs": rs} for form, rs in runs.items()}}


def bench_fleet(b):
    b.log("== fleet: a battery sweep (bench/fleet.py)")
    maxrss = floor._build_maxrss(b)
    if maxrss is None:
        b.log("  no gcc: skipped")
        return
    sizes = [int(n) for n in os.environ.get("BENCH_FLEET_N", "10,50").split(",")]
    width = int(os.environ.get("BENCH_FLEET_PARALLEL", "4"))
    reps = int(os.environ.get("BENCH_FLEET_RUNS", "1" if b.QUICK else "3"))
    out = b.RESULTS["fleet"] = {"parallel": width, "runs": reps, "configurations": []}
    for extra in configurations():
        config = {"sim": extra, "sizes": {}}
        out["configurations"].append(config)
        for n in sizes:
            config["sizes"][str(n)] = sweep(b, maxrss, n, width, reps, extra)
            b.save()


def report(b, L, verdict):
    f = b.RESULTS.get("fleet")
    if not f:
        return
    for config in f["configurations"]:
        report_configuration(b, L, verdict, f, config)


def report_configuration(b, L, verdict, f, config):
    sizes = sorted(config["sizes"], key=int)
    if not sizes:
        return
    label = ", ".join(f"{k}={v}" for k, v in config["sim"].items()) or "the simulator's defaults"
    L.append(f"### Fleet: a battery sweep, `--parallel {f['parallel']}`, {label} (median of {f['runs']})\n")
    for n in sizes:
        s = config["sizes"][n]
        st = s["settings"]
        L.append(f"{n} devices; simulator: connections one at a time {st['serial']}, {st['latency_s'] * 1000:.0f} ms "
                 f"each, link cap {st['max_links'] or 'none'}, disconnect timer {st['disconnect_s']:.1f} s; "
                 f"floor {s['floor_s']:.2f} s.\n")
        L.append("| form | ok | wall s | CPU s | peak RSS MB | link-limit refusals | first to last creation s | connector busy |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for form, v in s["forms"].items():
            rss = v["rss_kb"] / 1024 if v["rss_kb"] else None
            busy = v["connector_busy"] * 100 if v["connector_busy"] is not None else None
            L.append(f"| {form} | {v['ok']}/{n} | {b.fmt(v['wall_s'], '.2f')} | {b.fmt(v['cpu_s'], '.2f')} | "
                     f"{b.fmt(rss, '.1f')} | {b.fmt(v['link_limit'], '.0f')} | {b.fmt(v['connect_span_s'], '.2f')} | "
                     f"{b.fmt(busy, '.0f')} % |")
        fl, sh, bk = (s["forms"][k] for k in ("fleet", "shell loop", "bleak"))
        r = lambda k, o: b.ratio(fl[k], o[k])
        L.append(f"\nfleet/shell loop: wall {b.fmt(r('wall_s', sh), '.2f')}x, CPU {b.fmt(r('cpu_s', sh), '.2f')}x; "
                 f"fleet/bleak: wall {b.fmt(r('wall_s', bk), '.2f')}x, CPU {b.fmt(r('cpu_s', bk), '.2f')}x; "
                 f"fleet/floor: wall {b.fmt(b.ratio(fl['wall_s'], s['floor_s']), '.2f')}x (CPU has no floor)\n")
    big, small = config["sizes"][sizes[-1]], config["sizes"][sizes[0]]
    fl, sh, bk = (big["forms"][k] for k in ("fleet", "shell loop", "bleak"))
    n = int(sizes[-1])
    rss_growth = b.ratio(fl["rss_kb"], small["forms"]["fleet"]["rss_kb"])
    if len(sizes) > 1:
        L.append(f"fleet peak RSS, {sizes[-1]} vs {sizes[0]} devices: {b.fmt(rss_growth, '.3f')}x\n")
    # A time against a form that lost devices compares different work: not met, whatever it is.
    lost = lambda *forms: [k for k, v in zip(("fleet", "shell loop", "bleak"), (fl, sh, bk))
                           if any(v is form for form in forms) and v["ok"] < n]
    checks = [
        ("wall ≤ 0.5x the shell loop's", b.ratio(fl["wall_s"], sh["wall_s"]), 0.5, lost(fl, sh)),
        ("wall ≤ bleak's", b.ratio(fl["wall_s"], bk["wall_s"]), 1.0, lost(fl, bk)),
        ("wall within 15 % of the floor", b.ratio(fl["wall_s"], big["floor_s"]), 1.15, lost(fl)),
        ("CPU ≤ 0.5x the shell loop's", b.ratio(fl["cpu_s"], sh["cpu_s"]), 0.5, lost(fl, sh)),
        ("CPU ≤ 0.5x bleak's", b.ratio(fl["cpu_s"], bk["cpu_s"]), 0.5, lost(fl, bk)),
    ]
    if len(sizes) > 1:
        checks.append((f"peak RSS flat, {sizes[-1]} vs {sizes[0]} devices (≤ 1.05x)", rss_growth, 1.05, []))
    verdict.append((f"fleet of {n} ({label}): every device's result", fl["ok"] == n, f"{fl['ok']}/{n}"))
    for name, value, limit, losers in checks:
        note = f" ({', '.join(losers)} lost devices)" if losers else ""
        verdict.append((f"fleet of {n} ({label}): {name}", value is not None and value <= limit and not losers,
                        f"{b.fmt(value, '.2f')}x{note}"))
