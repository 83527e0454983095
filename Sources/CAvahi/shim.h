#ifndef NEARCARD_CAVAHI_SHIM_H
#define NEARCARD_CAVAHI_SHIM_H
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

// AVAHI_IF_UNSPEC and AVAHI_PROTO_UNSPEC are enum values Swift imports, but as a different integer
// type than the AvahiIfIndex/AvahiProtocol parameters; these shims give them the parameter types.
static inline AvahiIfIndex nearcard_avahi_if_unspec(void) { return AVAHI_IF_UNSPEC; }
static inline AvahiProtocol nearcard_avahi_proto_unspec(void) { return AVAHI_PROTO_UNSPEC; }
#endif
