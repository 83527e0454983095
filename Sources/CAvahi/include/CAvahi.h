#ifndef NEARCARD_CAVAHI_H
#define NEARCARD_CAVAHI_H
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <net/if.h>
#include <stddef.h>

// libavahi-client is loaded when discovery first starts (dlopen), not at every start of the program:
// with D-Bus and what libsystemd needs it is ten shared libraries, about 0.6 ms of every command's
// start, and `exchange HOST:PORT`, `contacts` or `--version` never use it (docs/PERFORMANCE.md,
// "Commands, exec → exit"). The functions Nearcard uses (of libavahi-client and libavahi-common),
// resolved once:
struct nearcard_avahi {
    __typeof__(&avahi_address_parse) _Nonnull address_parse;
    __typeof__(&avahi_address_snprint) _Nonnull address_snprint;
    __typeof__(&avahi_alternative_service_name) _Nonnull alternative_service_name;
    __typeof__(&avahi_client_errno) _Nonnull client_errno;
    __typeof__(&avahi_client_free) _Nonnull client_free;
    __typeof__(&avahi_client_get_host_name_fqdn) _Nonnull client_get_host_name_fqdn;
    __typeof__(&avahi_client_new) _Nonnull client_new;
    __typeof__(&avahi_entry_group_add_address) _Nonnull entry_group_add_address;
    __typeof__(&avahi_entry_group_add_service_strlst) _Nonnull entry_group_add_service_strlst;
    __typeof__(&avahi_entry_group_commit) _Nonnull entry_group_commit;
    __typeof__(&avahi_entry_group_free) _Nonnull entry_group_free;
    __typeof__(&avahi_entry_group_new) _Nonnull entry_group_new;
    __typeof__(&avahi_entry_group_reset) _Nonnull entry_group_reset;
    __typeof__(&avahi_free) _Nonnull free;
    __typeof__(&avahi_service_browser_free) _Nonnull service_browser_free;
    __typeof__(&avahi_service_browser_new) _Nonnull service_browser_new;
    __typeof__(&avahi_service_resolver_free) _Nonnull service_resolver_free;
    __typeof__(&avahi_service_resolver_new) _Nonnull service_resolver_new;
    __typeof__(&avahi_strerror) _Nonnull strerror;
    __typeof__(&avahi_string_list_add_arbitrary) _Nonnull string_list_add_arbitrary;
    __typeof__(&avahi_string_list_free) _Nonnull string_list_free;
    __typeof__(&avahi_string_list_get_next) _Nonnull string_list_get_next;
    __typeof__(&avahi_string_list_get_size) _Nonnull string_list_get_size;
    __typeof__(&avahi_string_list_get_text) _Nonnull string_list_get_text;
    __typeof__(&avahi_threaded_poll_free) _Nonnull threaded_poll_free;
    __typeof__(&avahi_threaded_poll_get) _Nonnull threaded_poll_get;
    __typeof__(&avahi_threaded_poll_lock) _Nonnull threaded_poll_lock;
    __typeof__(&avahi_threaded_poll_new) _Nonnull threaded_poll_new;
    __typeof__(&avahi_threaded_poll_start) _Nonnull threaded_poll_start;
    __typeof__(&avahi_threaded_poll_stop) _Nonnull threaded_poll_stop;
    __typeof__(&avahi_threaded_poll_unlock) _Nonnull threaded_poll_unlock;
};

// The library's functions, loaded on the first call (thread-safe; never unloaded). NULL when
// libavahi-client.so.3 cannot be loaded, with the loader's reason in `error`.
const struct nearcard_avahi *_Nullable nearcard_avahi_load(char *_Nonnull error, size_t length);

// AVAHI_IF_UNSPEC and AVAHI_PROTO_UNSPEC are enum values Swift imports, but as a different integer
// type than the AvahiIfIndex/AvahiProtocol parameters; these shims give them the parameter types.
static inline AvahiIfIndex nearcard_avahi_if_unspec(void) { return AVAHI_IF_UNSPEC; }
static inline AvahiProtocol nearcard_avahi_proto_unspec(void) { return AVAHI_PROTO_UNSPEC; }
#endif
