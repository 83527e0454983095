#include "CXML.h"

#include <CLoad.h>
#include <limits.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct {
    __typeof__(&xmlInitParser) init;
    __typeof__(&xmlCreateMemoryParserCtxt) create;
    __typeof__(&xmlCtxtUseOptions) options;
    __typeof__(&xmlParseDocument) parse;
    __typeof__(&xmlFreeParserCtxt) free;
} xml;
static int loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const symbols[] = {"xmlInitParser", "xmlCreateMemoryParserCtxt", "xmlCtxtUseOptions", "xmlParseDocument",
                                          "xmlFreeParserCtxt"};
    void **const slots[] = {(void **)&xml.init, (void **)&xml.create, (void **)&xml.options, (void **)&xml.parse, (void **)&xml.free};
    if (!nearcard_load("libxml2.so.2", symbols, slots, sizeof symbols / sizeof *symbols, failure, sizeof failure)) return;
    // Once, before any thread parses (libxml2's rule for threaded programs).
    xml.init();
    loaded = 1;
}

struct run {
    const struct nearcard_xml_events *events;
    void *context;
    char *error;
    size_t error_length;
    int complained;
};

static void start(void *ctx, const xmlChar *name, const xmlChar *prefix, const xmlChar *uri, int namespaces,
                  const xmlChar **ns, int attributes, int defaulted, const xmlChar **attrs) {
    (void)prefix, (void)namespaces, (void)ns, (void)attributes, (void)defaulted, (void)attrs;
    struct run *r = ctx;
    r->events->start(r->context, (const char *)uri, (const char *)name);
}

static void end(void *ctx, const xmlChar *name, const xmlChar *prefix, const xmlChar *uri) {
    (void)name, (void)prefix, (void)uri;
    struct run *r = ctx;
    r->events->end(r->context);
}

static void text(void *ctx, const xmlChar *bytes, int length) {
    struct run *r = ctx;
    r->events->text(r->context, bytes, length);
}

// The first error, kept; none is printed (libxml2 would write them to stderr).
static void complain(void *ctx, xmlErrorPtr error) {
    struct run *r = ctx;
    if (r->complained || !error) return;
    r->complained = 1;
    snprintf(r->error, r->error_length, "line %d: %s", error->line, error->message ? error->message : "not well-formed");
    size_t n = strlen(r->error);
    while (n > 0 && (r->error[n - 1] == '\n' || r->error[n - 1] == ' ')) r->error[--n] = 0;
}

static void quiet(void *ctx, const char *message, ...) { (void)ctx, (void)message; }

enum nearcard_xml_result nearcard_xml_parse(const unsigned char *data, size_t length, const struct nearcard_xml_events *events,
                                            void *context, char *error, size_t error_length) {
    if (error_length > 0) error[0] = 0;
    pthread_once(&once, load);
    if (!loaded) {
        snprintf(error, error_length, "%s", failure);
        return NEARCARD_XML_NO_LIBRARY;
    }
    if (length > INT_MAX) {
        snprintf(error, error_length, "the document is larger than %d bytes", INT_MAX);
        return NEARCARD_XML_MALFORMED;
    }
    xmlParserCtxtPtr parser = xml.create((const char *)data, (int)length);
    if (!parser) {
        snprintf(error, error_length, "libxml2 cannot make a parser (out of memory?)");
        return NEARCARD_XML_MALFORMED;
    }
    struct run r = {events, context, error, error_length, 0};
    // Only these handlers: no entity declarations are recorded (so none expands), no external subset
    // or entity is fetched.
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = start;
    sax.endElementNs = end;
    sax.characters = text;
    sax.cdataBlock = text;
    sax.serror = complain;
    sax.warning = quiet;
    memcpy(parser->sax, &sax, sizeof sax);
    parser->userData = &r;
    xml.options(parser, XML_PARSE_NONET | XML_PARSE_NOWARNING);
    int rc = xml.parse(parser);
    int well_formed = rc == 0 && parser->wellFormed;
    xml.free(parser);
    if (well_formed) return NEARCARD_XML_WELL_FORMED;
    if (!r.complained) snprintf(error, error_length, "not well-formed XML");
    return NEARCARD_XML_MALFORMED;
}
