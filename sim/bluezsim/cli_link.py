"""blectl-sim's commands for the other side of the link: `advertisements`, `applications`
and `central ...` (the simulated central: sim/bluezsim/central.py). The arguments are
checked before the simulator is asked (a usage error exits 2 whether or not one runs); the
simulator's refusals exit 1; an operation that ends in an ATT error, a timeout or a lost
link prints its record and exits 1."""

import json
import re
import sys

CENTRAL_USAGE = ("central [state | connect [--mtu N] | disconnect | read TARGET [--offset N] | "
                 "write TARGET HEX [--command] [--offset N] | subscribe TARGET [--indicate] | unsubscribe TARGET]")
CONTROL_TIMEOUT_S = 60      # a read waits for the application up to the central's ATT timeout (30 s)
OK_OUTCOMES = ("value", "written", "sent")


def _options(args, flags, valued, usage_error, what):
    """Splits args into positionals, flags ({name: True}) and valued options ({name: int})."""
    pos, opts = [], {}
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=")
        if a in flags:
            opts[a] = True
        elif name in valued:
            if eq:
                text = inline
            elif i + 1 < len(args):
                i += 1
                text = args[i]
            else:
                raise usage_error(f"{what}: {name} needs a value")
            if not text.isdigit() or int(text) > 0xFFFF:
                raise usage_error(f"{what}: {name} takes a number 0..65535, not {text!r}")
            opts[name] = int(text)
        elif a.startswith("--"):
            raise usage_error(f"{what}: unknown option {a!r}")
        else:
            pos.append(a)
        i += 1
    return pos, opts


def _print(text):
    json.dump(json.loads(str(text)), sys.stdout)
    sys.stdout.write("\n")


def cmd_advertisements(args, control, usage_error, failure):
    """advertisements [release PATH]"""
    if args and (args[0] != "release" or len(args) != 2):
        raise usage_error("advertisements takes nothing, or release PATH")
    import dbus
    ctl = control()
    try:
        if args:
            ctl.ReleaseAdvertisement(args[1])
        _print(ctl.Advertisements())
    except dbus.DBusException as e:
        raise failure(f"advertisements: {e.get_dbus_message()}")
    return 0


def cmd_applications(args, control, usage_error, failure):
    if args:
        raise usage_error("applications takes no arguments")
    import dbus
    try:
        _print(control().Applications())
    except dbus.DBusException as e:
        raise failure(f"applications: {e.get_dbus_message()}")
    return 0


def cmd_central(args, control, usage_error, failure):
    action, rest = (args[0] if args else "state"), args[1:]
    what = f"central {action}"
    if action == "state":
        pos, opts = _options(rest, (), (), usage_error, what)
        call = ("CentralState",)
    elif action == "connect":
        pos, opts = _options(rest, (), ("--mtu",), usage_error, what)
        mtu = opts.get("--mtu", 247)
        if not 23 <= mtu <= 517:
            raise usage_error("central connect: --mtu takes 23..517")
        call = ("CentralConnect", _uint16(mtu))
    elif action == "disconnect":
        pos, opts = _options(rest, (), (), usage_error, what)
        call = ("CentralDisconnect",)
    elif action in ("read", "write", "subscribe", "unsubscribe"):
        flags = {"write": ("--command",), "subscribe": ("--indicate",)}.get(action, ())
        valued = ("--offset",) if action in ("read", "write") else ()
        pos, opts = _options(rest, flags, valued, usage_error, what)
        want = 2 if action == "write" else 1
        if len(pos) != want:
            raise usage_error(f"{what} takes {'TARGET HEX' if action == 'write' else 'TARGET'}: {CENTRAL_USAGE}")
        pos, target = pos[1:], pos[0]
        if action == "read":
            call = ("CentralRead", target, _uint16(opts.get("--offset", 0)))
        elif action == "write":
            hexval = pos[0].replace(":", "").replace(" ", "")
            if not re.fullmatch(r"([0-9A-Fa-f]{2})*", hexval):
                raise usage_error(f"central write: {pos[0]!r} is not hex bytes")
            pos = []
            call = ("CentralWrite", target, _bytes(bytes.fromhex(hexval)), _bool(opts.get("--command", False)),
                    _uint16(opts.get("--offset", 0)))
        elif action == "subscribe":
            call = ("CentralSubscribe", target, _bool(opts.get("--indicate", False)))
        else:
            call = ("CentralUnsubscribe", target)
    else:
        raise usage_error(f"unknown central action {action!r}: {CENTRAL_USAGE}")
    if pos:
        raise usage_error(f"{what}: unexpected argument {pos[0]!r}")
    import dbus
    ctl = control()
    try:
        out = getattr(ctl, call[0])(*call[1:], timeout=CONTROL_TIMEOUT_S)
    except dbus.DBusException as e:
        raise failure(f"{what}: {e.get_dbus_message()}")
    _print(out)
    record = json.loads(str(out))
    return 0 if "op" not in record or record.get("outcome") in OK_OUTCOMES else 1


def _uint16(n):
    import dbus
    return dbus.UInt16(n)


def _bool(b):
    import dbus
    return dbus.Boolean(b)


def _bytes(b):
    import dbus
    return dbus.ByteArray(b)


COMMANDS = {"advertisements": cmd_advertisements, "applications": cmd_applications, "central": cmd_central}
