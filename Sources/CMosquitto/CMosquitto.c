#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static CMosquittoAPI api;
static const CMosquittoAPI *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Each function by its name in libmosquitto.so.1; false with the error when one is missing.
static bool resolve(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error, "libmosquitto.so.1 lacks %s", name);
        return false;
    }
    return true;
}

static void load(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libmosquitto.so.1 not found");
        return;
    }
    bool ok = resolve(library, (void **)&api.lib_init, "mosquitto_lib_init")
        && resolve(library, (void **)&api.new_client, "mosquitto_new")
        && resolve(library, (void **)&api.destroy, "mosquitto_destroy")
        && resolve(library, (void **)&api.username_pw_set, "mosquitto_username_pw_set")
        && resolve(library, (void **)&api.will_set, "mosquitto_will_set")
        && resolve(library, (void **)&api.tls_set, "mosquitto_tls_set")
        && resolve(library, (void **)&api.int_option, "mosquitto_int_option")
        && resolve(library, (void **)&api.reconnect_delay_set, "mosquitto_reconnect_delay_set")
        && resolve(library, (void **)&api.user_data_set, "mosquitto_user_data_set")
        && resolve(library, (void **)&api.connect_callback_set, "mosquitto_connect_callback_set")
        && resolve(library, (void **)&api.disconnect_callback_set, "mosquitto_disconnect_callback_set")
        && resolve(library, (void **)&api.publish_callback_set, "mosquitto_publish_callback_set")
        && resolve(library, (void **)&api.log_callback_set, "mosquitto_log_callback_set")
        && resolve(library, (void **)&api.connect_async, "mosquitto_connect_async")
        && resolve(library, (void **)&api.loop_start, "mosquitto_loop_start")
        && resolve(library, (void **)&api.loop_stop, "mosquitto_loop_stop")
        && resolve(library, (void **)&api.publish, "mosquitto_publish")
        && resolve(library, (void **)&api.disconnect, "mosquitto_disconnect")
        && resolve(library, (void **)&api.strerror, "mosquitto_strerror")
        && resolve(library, (void **)&api.connack_string, "mosquitto_connack_string")
        && resolve(library, (void **)&api.reconnect_async, "mosquitto_reconnect_async");
    if (!ok) return;
    int rc = api.lib_init();
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(load_error, sizeof load_error, "mosquitto_lib_init: %s", api.strerror(rc));
        return;
    }
    loaded = &api;
}

const CMosquittoAPI *cmosquitto_load(char *error, size_t size) {
    pthread_once(&once, load);
    if (loaded == NULL && error != NULL && size > 0) snprintf(error, size, "%s", load_error);
    return loaded;
}
