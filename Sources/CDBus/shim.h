#ifndef BLECTL_CDBUS_SHIM_H
#define BLECTL_CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <sys/eventfd.h>

// A close-on-exec, non-blocking eventfd (the read poller's wake-up): Swift's Glibc module
// does not carry sys/eventfd.h.
static inline int cdbus_wake_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

// Names the calling thread (at most 15 bytes are kept), as `top -H` and /proc show it.
#include <sys/prctl.h>
static inline void cdbus_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

// Waits until `fd` is readable or `nanoseconds` have passed, with ppoll(2): poll(2)'s timeout
// is whole milliseconds, and Swift's Glibc module does not show ppoll (a GNU extension).
// Returns ppoll's result (-1 with errno on failure, EINTR included).
#include <poll.h>
#include <signal.h>
#include <time.h>
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
static inline int cdbus_wait_readable(int fd, long nanoseconds) {
    struct pollfd descriptor = { .fd = fd, .events = POLLIN, .revents = 0 };
    struct timespec timeout = { .tv_sec = nanoseconds / 1000000000L, .tv_nsec = nanoseconds % 1000000000L };
    return ppoll(&descriptor, 1, &timeout, NULL);
}

// DBUS_TYPE_* are macros of the form ((int) 'y'); Swift does not import them.
static const int CDBUS_TYPE_INVALID     = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE        = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN     = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16       = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16      = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32       = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32      = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64       = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64      = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE      = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING      = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE   = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD     = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY       = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT     = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT      = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY  = DBUS_TYPE_DICT_ENTRY;

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL   = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR         = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL        = DBUS_MESSAGE_TYPE_SIGNAL;

static const unsigned int CDBUS_WATCH_READABLE = DBUS_WATCH_READABLE;
static const unsigned int CDBUS_WATCH_WRITABLE = DBUS_WATCH_WRITABLE;

#endif
