#ifndef BLECTL_CMOSQUITTO_H
#define BLECTL_CMOSQUITTO_H

// libmosquitto (Debian's libmosquitto1, the Eclipse Mosquitto client library), loaded with
// dlopen(3) the first time MQTT is asked for, not linked: blectl starts without it, and a
// system without libmosquitto1 runs every command but those given --mqtt. The header gives
// the types and constants; the functions are reached through `CMosquittoAPI`.
#include <mosquitto.h>
#include <stdbool.h>
#include <stddef.h>

// The libmosquitto functions blectl calls, each with the signature mosquitto.h declares.
typedef struct CMosquittoAPI {
    int (*lib_init)(void);
    struct mosquitto *(*new_client)(const char *id, bool clean_session, void *obj);
    void (*destroy)(struct mosquitto *mosq);
    int (*username_pw_set)(struct mosquitto *mosq, const char *username, const char *password);
    int (*will_set)(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
    int (*tls_set)(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                   const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
    int (*int_option)(struct mosquitto *mosq, enum mosq_opt_t option, int value);
    int (*reconnect_delay_set)(struct mosquitto *mosq, unsigned int delay, unsigned int delay_max, bool exponential);
    void (*user_data_set)(struct mosquitto *mosq, void *obj);
    void (*connect_callback_set)(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int));
    void (*disconnect_callback_set)(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int));
    void (*publish_callback_set)(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int));
    void (*log_callback_set)(struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *));
    int (*connect_async)(struct mosquitto *mosq, const char *host, int port, int keepalive);
    int (*reconnect_async)(struct mosquitto *mosq);
    int (*loop_start)(struct mosquitto *mosq);
    int (*loop_stop)(struct mosquitto *mosq, bool force);
    int (*publish)(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
    int (*disconnect)(struct mosquitto *mosq);
    const char *(*strerror)(int mosq_errno);
    const char *(*connack_string)(int connack_code);
} CMosquittoAPI;

// Loads libmosquitto.so.1 and calls mosquitto_lib_init once (later calls return the same
// answer). Returns the functions, or NULL with dlerror(3)'s message copied into `error`
// (at most `size` bytes, NUL-terminated).
const CMosquittoAPI *cmosquitto_load(char *error, size_t size);

// MOSQ_OPT_PROTOCOL_VERSION's value for MQTT 3.1.1 (a macro Swift does not import).
static const int CMOSQUITTO_PROTOCOL_V311 = MQTT_PROTOCOL_V311;
// The level of the library's error messages (MOSQ_LOG_ERR, a shift Swift does not import).
static const int CMOSQUITTO_LOG_ERR = MOSQ_LOG_ERR;

#endif
