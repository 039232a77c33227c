"""Runs blectl inside the realbluez VM, on the VM's own system bus (a Unix socket, so that
AcquireWrite/AcquireNotify can pass their file descriptors, which the host's TCP bus
cannot). Called by the init's `blectl-exec` command.

Usage: python3 vmexec.py SPEC
SPEC is base64 of a JSON object:
  {"argv": [blectl arguments], "files": {"/tmp/path": base64 contents, ...},
   "stdin": base64 or null, "timeout": seconds (default 60)}
Prints one JSON line: {"status": exit status (-N: killed by signal N; 127: no blectl in
the VM), "stdout": text, "stderr": text, "seconds": wall time}.
The binary is /opt/blectl/blectl: realbluez/run puts it in a cpio archive of its own,
loaded in front of the cached image's initramfs (Linux unpacks concatenated archives).
"""
import base64
import json
import os
import subprocess
import sys
import time

BLECTL = "/opt/blectl/blectl"


def main():
    spec = json.loads(base64.b64decode(sys.argv[1]))
    for path, contents in spec.get("files", {}).items():
        with open(path, "wb") as f:
            f.write(base64.b64decode(contents))
    if not os.access(BLECTL, os.X_OK):
        print(json.dumps({"status": 127, "stdout": "", "stderr": f"{BLECTL}: not in this VM (realbluez/run adds it)",
                          "seconds": 0}))
        return
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SYSTEM_BUS_ADDRESS"}
    stdin = base64.b64decode(spec["stdin"]) if spec.get("stdin") is not None else b""
    t = time.monotonic()
    try:
        p = subprocess.run([BLECTL, *spec["argv"]], input=stdin, capture_output=True, env=env,
                           timeout=spec.get("timeout", 60))
        status, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        status, out, err = -9, e.stdout or b"", (e.stderr or b"") + b"\nvmexec: killed at its timeout"
    print(json.dumps({"status": status, "stdout": out.decode(errors="replace"),
                      "stderr": err.decode(errors="replace"), "seconds": round(time.monotonic() - t, 3)}))


if __name__ == "__main__":
    main()
