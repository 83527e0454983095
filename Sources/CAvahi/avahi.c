#include "CAvahi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libavahi-common comes with it (a dependency of libavahi-client); dlsym searches both.
#define LIBRARY "libavahi-client.so.3"

static struct nearcard_avahi table;
static const struct nearcard_avahi *loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define RESOLVE(field)                                                                          \
    if (!(*(void **)&table.field = dlsym(library, "avahi_" #field))) {                          \
        snprintf(failure, sizeof failure, "%s has no avahi_%s (an old Avahi?)", LIBRARY, #field); \
        return;                                                                                 \
    }
    RESOLVE(address_parse)
    RESOLVE(address_snprint)
    RESOLVE(alternative_service_name)
    RESOLVE(client_errno)
    RESOLVE(client_free)
    RESOLVE(client_new)
    RESOLVE(entry_group_add_address)
    RESOLVE(entry_group_add_service_strlst)
    RESOLVE(entry_group_commit)
    RESOLVE(entry_group_free)
    RESOLVE(entry_group_new)
    RESOLVE(entry_group_reset)
    RESOLVE(free)
    RESOLVE(service_browser_free)
    RESOLVE(service_browser_new)
    RESOLVE(service_resolver_free)
    RESOLVE(service_resolver_new)
    RESOLVE(strerror)
    RESOLVE(string_list_add_arbitrary)
    RESOLVE(string_list_free)
    RESOLVE(string_list_get_next)
    RESOLVE(string_list_get_size)
    RESOLVE(string_list_get_text)
    RESOLVE(threaded_poll_free)
    RESOLVE(threaded_poll_get)
    RESOLVE(threaded_poll_lock)
    RESOLVE(threaded_poll_new)
    RESOLVE(threaded_poll_start)
    RESOLVE(threaded_poll_stop)
    RESOLVE(threaded_poll_unlock)
#undef RESOLVE
    loaded = &table;
}

const struct nearcard_avahi *nearcard_avahi_load(char *error, size_t length) {
    pthread_once(&once, load);
    if (!loaded && length > 0) snprintf(error, length, "%s", failure);
    return loaded;
}
