/* cbaseline objects, scan and scan-updates: decoding, the device set, the signals (see cbaseline.c). */
#include "cbaseline.h"

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

void managed_objects(DBusConnection *c, int remember) {
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

/* cbaseline scan / scan-updates (every: a line per RSSI sighting): see cbaseline.c. */
int scan_main(int every, double seconds) {
    every_sighting = every;
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
