/* cbaseline notify: one characteristic's notifications as hex lines (see cbaseline.c). */
#include "cbaseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int notify_main(const char *addr, const char *uuid, long count, double seconds) {
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
