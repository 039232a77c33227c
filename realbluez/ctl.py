#!/usr/bin/env python3
"""Command channel to the realbluez VM (its second serial port, a unix socket on the host).

Usage: python3 realbluez/ctl.py SOCKET COMMAND [ARGS...]
Commands (see realbluez/init): ping, con, info, log [N], dmesg, btmon [N],
restart-bluetoothd [ARGS...], fixture, bumble-state, bumble COMMAND (central ...).
Prints the answer; exits with the command's status.
"""
import socket
import sys
import time


def command(path, line, timeout=60.0):
    """Send one command line; return (status, output text)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    try:
        s.sendall(line.encode() + b"\n")
        data = b""
        deadline = time.monotonic() + timeout
        while b"@@END " not in data or not data.rstrip().splitlines()[-1].startswith(b"@@END "):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer to {line!r}: {data[-300:]!r}")
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("command channel closed")
            data += chunk
    finally:
        s.close()
    text = data.decode(errors="replace").replace("\r", "")
    lines = text.rstrip("\n").split("\n")
    status = int(lines[-1].split()[1])
    return status, "\n".join(lines[:-1])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    status, out = command(sys.argv[1], " ".join(sys.argv[2:]))
    print(out)
    sys.exit(status)
