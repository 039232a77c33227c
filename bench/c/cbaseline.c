/* C libdbus baseline for blectl's benchmarks (bench/run builds it with gcc and
 * `pkg-config dbus-1`).
 *
 *   cbaseline --version           print a version string and exit (start-up floor)
 *   cbaseline objects             connect to the system bus, GetManagedObjects on org.bluez,
 *                                 decode the reply, exit (what `blectl scan --timeout 0` does)
 *   cbaseline scan-updates [SECONDS]  as scan, a line for every RSSI sighting (blectl scan --updates)
 *   cbaseline scan [SECONDS]      AddMatch InterfacesAdded/InterfacesRemoved/PropertiesChanged
 *                                 from org.bluez, GetManagedObjects, SetDiscoveryFilter
 *                                 {Transport: le}, StartDiscovery; read and decode every
 *                                 signal; print one line per device newly heard (address,
 *                                 name, rssi); SIGINT/SIGTERM or SECONDS end it with
 *                                 StopDiscovery.  The lower bound for a libdbus scanner.
 *   cbaseline notify ADDR CHAR_UUID COUNT [SECONDS]
 *                                 Connect the device (its BlueZ path from ADDR), wait for the
 *                                 characteristic CHAR_UUID (full 128-bit, lower case) to appear
 *                                 (GetManagedObjects every 20 ms), AddMatch PropertiesChanged on
 *                                 its path, StartNotify, then print each Value as one hex line
 *                                 (stdout flushed once per drained read) until COUNT values or
 *                                 SECONDS (default 60); StopNotify, Disconnect.  The lower bound
 *                                 for a libdbus notification client (bench/streams.py).
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (libdbus's own lookup), as for blectl.
 *
 * One program in three files: this one (the commands, the bus calls they share),
 * cbaseline-scan.c (objects, scan, scan-updates), cbaseline-notify.c (notify).
 */
#include "cbaseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- calls */
DBusMessage *call(DBusConnection *c, const char *path, const char *iface, const char *method,
                  DBusMessage *m) {
    DBusError err;
    dbus_error_init(&err);
    if (!m) m = dbus_message_new_method_call("org.bluez", path, iface, method);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(c, m, 25000, &err);
    dbus_message_unref(m);
    if (!r) {
        fprintf(stderr, "cbaseline: %s: %s: %s\n", method, err.name, err.message);
        dbus_error_free(&err);
        exit(1);
    }
    return r;
}

DBusConnection *connect_bus(void) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err);
    if (!c) {
        fprintf(stderr, "cbaseline: bus: %s\n", err.message);
        exit(1);
    }
    dbus_connection_set_exit_on_disconnect(c, FALSE);
    return c;
}

double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--version")) {
        puts("cbaseline 1.0");
        return 0;
    }
    if (!strcmp(argv[1], "objects")) {
        DBusConnection *c = connect_bus();
        managed_objects(c, 0);
        dbus_connection_close(c);
        return 0;
    }
    if (!strcmp(argv[1], "notify") && argc >= 5)
        return notify_main(argv[2], argv[3], atol(argv[4]), argc > 5 ? atof(argv[5]) : 60);
    int every = !strcmp(argv[1], "scan-updates");
    if (strcmp(argv[1], "scan") && !every) {
        fprintf(stderr, "usage: cbaseline --version | objects | scan [SECONDS] | scan-updates [SECONDS] | notify ADDR CHAR_UUID COUNT [SECONDS]\n");
        return 2;
    }
    return scan_main(every, argc > 2 ? atof(argv[2]) : 10);
}
