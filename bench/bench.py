"""blectl benchmarks against the simulated BlueZ (driven by bench/run).

Every client is a child of this process; its CPU (user+sys) and peak RSS come from
os.wait4's rusage, wall times from time.perf_counter. Medians of REPS runs; ratios are
computed within this one run (the machine is shared: never compare absolute numbers
across runs). Results: bench/out/results.json, bench/out/report.md, bench/discovery.png.
This file picks the benchmarks (BENCH_ONLY); harness.py holds what they share (simulator,
children, results), commands.py and discovery.py the core benchmarks, report.py the report.
"""
import json
import os
import signal
import sys

import prompt
import scancost
import instructions
import floor  # bench/floor.py: start-up floors of Swift programs built as blectl is
import streams  # bench/streams.py: notification streams, write --file against the link's drain
import fleet  # bench/fleet.py: a battery sweep of many devices, blectl's fleet form against a shell loop and bleak
import gateway  # bench/gateway.py: gateways into an MQTT broker, blectl against bleak+paho and Theengs Gateway
# The parts and the harness they share. The names below are this module's interface too:
# prompt, scancost, instructions, floor, streams, fleet and gateway get this module as `b`, bench/ab.py
# imports it.
from harness import (  # noqa: F401
    BLECTL, CBASE, HERE, NS, OUT, PROBE, PY, QUICK, RESULTS, ROOT, Child, Sim, fmt, log, med, ratio,
    run_once, save)
from discovery import CLIENTS, bench_discovery, bench_rss_baseline, discovery_run, is_bench_line  # noqa: F401
from commands import bench_ctrl_c, bench_oneshot, bench_startup, bench_write
from report import code_layout, machine, plot, report


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
    only = os.environ.get("BENCH_ONLY", "startup,discovery,oneshot,ctrlc,write,write_drain,streams,prompt,updates,instructions,floor,fleet,gateway").split(",")
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
    if "fleet" in only:
        fleet.bench_fleet(sys.modules[__name__])
    if "gateway" in only:
        gateway.bench_gateway(sys.modules[__name__])
    RESULTS["machine"]["loadavg_end"] = os.getloadavg()
    save()
    plot()
    report(sys.modules[__name__])


if __name__ == "__main__":
    main()
