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
 */
#include <dbus/dbus.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

/* ---------------------------------------------------------------- decoding */
typedef struct {
    const char *address;
    const char *name;
    int has_rssi;
    int rssi;
} dev_props;

static unsigned long decoded_values;

/* Walk every value (as a generic decoder would); optionally note Device1 props. */
static void walk(DBusMessageIter *it) {
    do {
        int t = dbus_message_iter_get_arg_type(it);
        if (t == DBUS_TYPE_INVALID) break;
        if (dbus_type_is_container(t)) {
            DBusMessageIter sub;
            dbus_message_iter_recurse(it, &sub);
            walk(&sub);
        } else {
            DBusBasicValue v;
            dbus_message_iter_get_basic(it, &v);
            decoded_values++;
        }
    } while (dbus_message_iter_next(it));
}

/* it points at a{sv} of Device1 properties */
static void device_props(DBusMessageIter *arr, dev_props *p) {
    DBusMessageIter entry;
    if (dbus_message_iter_get_arg_type(arr) != DBUS_TYPE_ARRAY) return;
    dbus_message_iter_recurse(arr, &entry);
    while (dbus_message_iter_get_arg_type(&entry) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter kv, var;
        const char *key;
        dbus_message_iter_recurse(&entry, &kv);
        dbus_message_iter_get_basic(&kv, &key);
        dbus_message_iter_next(&kv);
        dbus_message_iter_recurse(&kv, &var);
        int t = dbus_message_iter_get_arg_type(&var);
        if (!strcmp(key, "Address") && t == DBUS_TYPE_STRING) dbus_message_iter_get_basic(&var, &p->address);
        else if (!strcmp(key, "Name") && t == DBUS_TYPE_STRING) dbus_message_iter_get_basic(&var, &p->name);
        else if (!strcmp(key, "RSSI") && t == DBUS_TYPE_INT16) {
            int16_t r;
            dbus_message_iter_get_basic(&var, &r);
            p->has_rssi = 1;
            p->rssi = r;
        } else
            walk(&var);
        dbus_message_iter_next(&entry);
    }
}

/* ---------------------------------------------------------------- device set */
typedef struct {
    char *path;
    char *address;
    char *name;
    int reported;
} device;
static device *table;
static size_t tcap, tcount;

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}
static device *lookup(const char *path, int create) {
    if (tcount * 2 >= tcap) {
        size_t ncap = tcap ? tcap * 2 : 1024;
        device *n = calloc(ncap, sizeof *n);
        for (size_t i = 0; i < tcap; i++)
            if (table[i].path) {
                size_t j = hash(table[i].path) & (ncap - 1);
                while (n[j].path) j = (j + 1) & (ncap - 1);
                n[j] = table[i];
            }
        free(table);
        table = n;
        tcap = ncap;
    }
    size_t j = hash(path) & (tcap - 1);
    while (table[j].path) {
        if (!strcmp(table[j].path, path)) return &table[j];
        j = (j + 1) & (tcap - 1);
    }
    if (!create) return NULL;
    table[j].path = strdup(path);
    tcount++;
    return &table[j];
}

static unsigned long reported;
static int every_sighting; /* scan-updates: a line per RSSI sighting, as blectl scan --updates */
static void report(device *d, int rssi) {
    if ((d->reported && !every_sighting) || !d->address) return;
    d->reported = 1;
    reported++;
    printf("{\"address\":\"%s\",\"name\":\"%s\",\"rssi\":%d}\n", d->address, d->name ? d->name : "", rssi);
}

/* a{sa{sv}} for one object; heard = advertising now (RSSI present) */
static void object_interfaces(const char *path, DBusMessageIter *ifaces, int from_signal) {
    DBusMessageIter entry;
    dbus_message_iter_recurse(ifaces, &entry);
    while (dbus_message_iter_get_arg_type(&entry) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter kv;
        const char *iface;
        dbus_message_iter_recurse(&entry, &kv);
        dbus_message_iter_get_basic(&kv, &iface);
        dbus_message_iter_next(&kv);
        if (!strcmp(iface, "org.bluez.Device1")) {
            dev_props p = {0};
            device_props(&kv, &p);
            device *d = lookup(path, 1);
            if (p.address && !d->address) d->address = strdup(p.address);
            if (p.name && !d->name) d->name = strdup(p.name);
            if (from_signal && p.has_rssi) report(d, p.rssi);
        } else {
            walk(&kv);
        }
        dbus_message_iter_next(&entry);
    }
}

static void handle_signal(DBusMessage *m) {
    const char *member = dbus_message_get_member(m);
    DBusMessageIter it;
    if (!member || !dbus_message_iter_init(m, &it)) return;
    if (!strcmp(member, "InterfacesAdded")) {
        const char *path;
        dbus_message_iter_get_basic(&it, &path);
        dbus_message_iter_next(&it);
        object_interfaces(path, &it, 1);
    } else if (!strcmp(member, "PropertiesChanged")) {
        const char *iface;
        dbus_message_iter_get_basic(&it, &iface);
        dbus_message_iter_next(&it);
        if (!strcmp(iface, "org.bluez.Device1")) {
            dev_props p = {0};
            device_props(&it, &p);
            dbus_message_iter_next(&it);
            walk(&it); /* invalidated */
            device *d = lookup(dbus_message_get_path(m), 0);
            if (d) {
                if (p.name && !d->name) d->name = strdup(p.name);
                if (p.has_rssi) report(d, p.rssi);
            }
        } else
            walk(&it);
    } else if (!strcmp(member, "InterfacesRemoved")) {
        walk(&it);
    }
}

/* ---------------------------------------------------------------- calls */
static DBusMessage *call(DBusConnection *c, const char *path, const char *iface, const char *method,
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

static DBusConnection *connect_bus(void) {
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

static void managed_objects(DBusConnection *c, int remember) {
    DBusMessage *r = call(c, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", NULL);
    DBusMessageIter it, obj;
    dbus_message_iter_init(r, &it);
    dbus_message_iter_recurse(&it, &obj);
    while (dbus_message_iter_get_arg_type(&obj) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter kv;
        const char *path;
        dbus_message_iter_recurse(&obj, &kv);
        dbus_message_iter_get_basic(&kv, &path);
        dbus_message_iter_next(&kv);
        if (remember) object_interfaces(path, &kv, 0);
        else walk(&kv);
        dbus_message_iter_next(&obj);
    }
    dbus_message_unref(r);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- notify */
/* The path of the GattCharacteristic1 with this UUID under dev (uuid NULL: dev itself, once it
 * exists), or NULL (caller frees). */
static char *find_characteristic(DBusConnection *c, const char *dev, const char *uuid) {
    DBusMessage *r = call(c, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", NULL);
    DBusMessageIter it, obj;
    char *found = NULL;
    size_t devlen = strlen(dev);
    dbus_message_iter_init(r, &it);
    dbus_message_iter_recurse(&it, &obj);
    while (!found && dbus_message_iter_get_arg_type(&obj) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter kv, ifaces;
        const char *path;
        dbus_message_iter_recurse(&obj, &kv);
        dbus_message_iter_get_basic(&kv, &path);
        dbus_message_iter_next(&kv);
        if (!uuid) {
            if (!strcmp(path, dev)) found = strdup(path);
        } else if (!strncmp(path, dev, devlen) && path[devlen] == '/') {
            dbus_message_iter_recurse(&kv, &ifaces);
            while (dbus_message_iter_get_arg_type(&ifaces) == DBUS_TYPE_DICT_ENTRY) {
                DBusMessageIter ikv, props;
                const char *iface;
                dbus_message_iter_recurse(&ifaces, &ikv);
                dbus_message_iter_get_basic(&ikv, &iface);
                dbus_message_iter_next(&ikv);
                if (!strcmp(iface, "org.bluez.GattCharacteristic1")) {
                    dbus_message_iter_recurse(&ikv, &props);
                    while (dbus_message_iter_get_arg_type(&props) == DBUS_TYPE_DICT_ENTRY) {
                        DBusMessageIter pkv, var;
                        const char *key, *val;
                        dbus_message_iter_recurse(&props, &pkv);
                        dbus_message_iter_get_basic(&pkv, &key);
                        dbus_message_iter_next(&pkv);
                        dbus_message_iter_recurse(&pkv, &var);
                        if (!strcmp(key, "UUID") && dbus_message_iter_get_arg_type(&var) == DBUS_TYPE_STRING) {
                            dbus_message_iter_get_basic(&var, &val);
                            if (!strcmp(val, uuid)) found = strdup(path);
                        }
                        dbus_message_iter_next(&props);
                    }
                }
                dbus_message_iter_next(&ifaces);
            }
        }
        dbus_message_iter_next(&obj);
    }
    dbus_message_unref(r);
    return found;
}

static const char hexdigits[] = "0123456789abcdef";

/* A PropertiesChanged of GattCharacteristic1 with Value: one hex line; returns 1 if printed. */
static int print_value(DBusMessage *m) {
    DBusMessageIter it, props;
    const char *iface;
    if (!dbus_message_iter_init(m, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_STRING) return 0;
    dbus_message_iter_get_basic(&it, &iface);
    if (strcmp(iface, "org.bluez.GattCharacteristic1") || !dbus_message_iter_next(&it)) return 0;
    dbus_message_iter_recurse(&it, &props);
    while (dbus_message_iter_get_arg_type(&props) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter kv, var, arr;
        const char *key;
        dbus_message_iter_recurse(&props, &kv);
        dbus_message_iter_get_basic(&kv, &key);
        dbus_message_iter_next(&kv);
        if (!strcmp(key, "Value")) {
            const unsigned char *bytes;
            int n;
            char line[1026];
            dbus_message_iter_recurse(&kv, &var);
            if (dbus_message_iter_get_arg_type(&var) != DBUS_TYPE_ARRAY) return 0;
            dbus_message_iter_recurse(&var, &arr);
            dbus_message_iter_get_fixed_array(&arr, &bytes, &n);
            if (n > 512) n = 512;
            for (int i = 0; i < n; i++) {
                line[2 * i] = hexdigits[bytes[i] >> 4];
                line[2 * i + 1] = hexdigits[bytes[i] & 15];
            }
            line[2 * n] = '\n';
            fwrite(line, 1, 2 * n + 1, stdout);
            return 1;
        }
        dbus_message_iter_next(&props);
    }
    return 0;
}

static int notify_main(const char *addr, const char *uuid, long count, double seconds) {
    static char outbuf[1 << 16];
    char dev[64], rule[512];
    int k = snprintf(dev, sizeof dev, "/org/bluez/hci0/dev_%s", addr);
    for (int i = 20; i < k; i++)
        if (dev[i] == ':') dev[i] = '_';
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    DBusConnection *c = connect_bus();
    double deadline = now() + seconds;
    struct timespec poll = {0, 20 * 1000 * 1000};
    char *found;
    dbus_message_unref(call(c, "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery", NULL));
    while (!(found = find_characteristic(c, dev, NULL))) {
        if (now() > deadline) {
            fprintf(stderr, "cbaseline: %s not found\n", dev);
            return 1;
        }
        nanosleep(&poll, NULL);
    }
    free(found);
    dbus_message_unref(call(c, "/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery", NULL));
    dbus_message_unref(call(c, dev, "org.bluez.Device1", "Connect", NULL));
    char *ch;
    while (!(ch = find_characteristic(c, dev, uuid))) {
        if (now() > deadline) {
            fprintf(stderr, "cbaseline: no characteristic %s on %s\n", uuid, dev);
            return 1;
        }
        nanosleep(&poll, NULL);
    }
    snprintf(rule, sizeof rule,
             "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged',path='%s'", ch);
    DBusError err;
    dbus_error_init(&err);
    dbus_bus_add_match(c, rule, &err);
    if (dbus_error_is_set(&err)) {
        fprintf(stderr, "cbaseline: AddMatch: %s\n", err.message);
        return 1;
    }
    dbus_message_unref(call(c, ch, "org.bluez.GattCharacteristic1", "StartNotify", NULL));
    long got = 0;
    while (got < count && now() < deadline) {
        if (!dbus_connection_read_write(c, 50)) break;
        DBusMessage *m;
        int any = 0;
        while ((m = dbus_connection_pop_message(c))) {
            if (got < count && dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL &&
                dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged") &&
                !strcmp(dbus_message_get_path(m), ch))
                got += print_value(m);
            dbus_message_unref(m);
            any = 1;
        }
        if (any) fflush(stdout);
    }
    fflush(stdout);
    dbus_message_unref(call(c, ch, "org.bluez.GattCharacteristic1", "StopNotify", NULL));
    dbus_message_unref(call(c, dev, "org.bluez.Device1", "Disconnect", NULL));
    dbus_connection_close(c);
    free(ch);
    return got == count ? 0 : 124;
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
    every_sighting = !strcmp(argv[1], "scan-updates");
    if (strcmp(argv[1], "scan") && !every_sighting) {
        fprintf(stderr, "usage: cbaseline --version | objects | scan [SECONDS] | scan-updates [SECONDS] | notify ADDR CHAR_UUID COUNT [SECONDS]\n");
        return 2;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 10;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    DBusConnection *c = connect_bus();
    static const char *rules[] = {
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'",
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesRemoved'",
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
    };
    for (int i = 0; i < 3; i++) {
        DBusError err;
        dbus_error_init(&err);
        dbus_bus_add_match(c, rules[i], &err);
        if (dbus_error_is_set(&err)) {
            fprintf(stderr, "cbaseline: AddMatch: %s\n", err.message);
            return 1;
        }
    }
    managed_objects(c, 1);
    {
        DBusMessage *m = dbus_message_new_method_call("org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1",
                                                      "SetDiscoveryFilter");
        DBusMessageIter it, arr, e, var;
        const char *k = "Transport", *v = "le";
        dbus_message_iter_init_append(m, &it);
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &arr);
        dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &e);
        dbus_message_iter_append_basic(&e, DBUS_TYPE_STRING, &k);
        dbus_message_iter_open_container(&e, DBUS_TYPE_VARIANT, "s", &var);
        dbus_message_iter_append_basic(&var, DBUS_TYPE_STRING, &v);
        dbus_message_iter_close_container(&e, &var);
        dbus_message_iter_close_container(&arr, &e);
        dbus_message_iter_close_container(&it, &arr);
        dbus_message_unref(call(c, "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", m));
    }
    dbus_message_unref(call(c, "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery", NULL));

    double deadline = now() + seconds;
    while (!stop_requested && now() < deadline) {
        /* one blocking read (up to 50 ms), then everything that is queued */
        if (!dbus_connection_read_write(c, 50)) break;
        DBusMessage *m;
        int any = 0;
        while ((m = dbus_connection_pop_message(c))) {
            if (dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL) handle_signal(m);
            dbus_message_unref(m);
            any = 1;
        }
        if (any) fflush(stdout);
    }
    fflush(stdout);
    dbus_message_unref(call(c, "/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery", NULL));
    dbus_connection_close(c);
    fprintf(stderr, "cbaseline: %lu devices reported, %lu values decoded\n", reported, decoded_values);
    return 0;
}
