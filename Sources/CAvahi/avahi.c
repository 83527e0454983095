#include "CAvahi.h"

#include <CLoad.h>
#include <pthread.h>
#include <stdio.h>

// libavahi-common comes with libavahi-client (its dependency); dlsym searches both.

static struct nearcard_avahi table;
static const struct nearcard_avahi *loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const symbols[] = {
        "avahi_address_parse",
        "avahi_address_snprint",
        "avahi_alternative_service_name",
        "avahi_client_errno",
        "avahi_client_free",
        "avahi_client_get_host_name_fqdn",
        "avahi_client_new",
        "avahi_entry_group_add_address",
        "avahi_entry_group_add_service_strlst",
        "avahi_entry_group_commit",
        "avahi_entry_group_free",
        "avahi_entry_group_new",
        "avahi_entry_group_reset",
        "avahi_free",
        "avahi_service_browser_free",
        "avahi_service_browser_new",
        "avahi_service_resolver_free",
        "avahi_service_resolver_new",
        "avahi_strerror",
        "avahi_string_list_add_arbitrary",
        "avahi_string_list_free",
        "avahi_string_list_get_next",
        "avahi_string_list_get_size",
        "avahi_string_list_get_text",
        "avahi_threaded_poll_free",
        "avahi_threaded_poll_get",
        "avahi_threaded_poll_lock",
        "avahi_threaded_poll_new",
        "avahi_threaded_poll_start",
        "avahi_threaded_poll_stop",
        "avahi_threaded_poll_unlock",
    };
    void **const slots[] = {
        (void **)&table.address_parse,
        (void **)&table.address_snprint,
        (void **)&table.alternative_service_name,
        (void **)&table.client_errno,
        (void **)&table.client_free,
        (void **)&table.client_get_host_name_fqdn,
        (void **)&table.client_new,
        (void **)&table.entry_group_add_address,
        (void **)&table.entry_group_add_service_strlst,
        (void **)&table.entry_group_commit,
        (void **)&table.entry_group_free,
        (void **)&table.entry_group_new,
        (void **)&table.entry_group_reset,
        (void **)&table.free,
        (void **)&table.service_browser_free,
        (void **)&table.service_browser_new,
        (void **)&table.service_resolver_free,
        (void **)&table.service_resolver_new,
        (void **)&table.strerror,
        (void **)&table.string_list_add_arbitrary,
        (void **)&table.string_list_free,
        (void **)&table.string_list_get_next,
        (void **)&table.string_list_get_size,
        (void **)&table.string_list_get_text,
        (void **)&table.threaded_poll_free,
        (void **)&table.threaded_poll_get,
        (void **)&table.threaded_poll_lock,
        (void **)&table.threaded_poll_new,
        (void **)&table.threaded_poll_start,
        (void **)&table.threaded_poll_stop,
        (void **)&table.threaded_poll_unlock,
    };
    if (nearcard_load("libavahi-client.so.3", symbols, slots, sizeof symbols / sizeof *symbols, failure, sizeof failure)) loaded = &table;
}

const struct nearcard_avahi *nearcard_avahi_load(char *error, size_t length) {
    pthread_once(&once, load);
    if (!loaded && length > 0) snprintf(error, length, "%s", failure);
    return loaded;
}
