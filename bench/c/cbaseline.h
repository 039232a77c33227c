/* What the files of the C libdbus baseline share (cbaseline.c: the commands and the bus
 * calls; cbaseline-scan.c: objects and scan; cbaseline-notify.c: notify). */
#ifndef CBASELINE_H
#define CBASELINE_H

#include <dbus/dbus.h>

/* cbaseline.c */
DBusMessage *call(DBusConnection *c, const char *path, const char *iface, const char *method, DBusMessage *m);
DBusConnection *connect_bus(void);
double now(void);

/* cbaseline-scan.c */
void managed_objects(DBusConnection *c, int remember);
int scan_main(int every, double seconds);

/* cbaseline-notify.c */
int notify_main(const char *addr, const char *uuid, long count, double seconds);

#endif
