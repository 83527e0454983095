#ifndef NEARCARD_CXML_H
#define NEARCARD_CXML_H
#include <stddef.h>

// XML through libxml2's SAX2 parser with namespaces, loaded the first time a document is read
// (dlopen), not at every start of the program: with ICU it is three shared libraries, about 0.9 ms of
// every command's start, and only the CardDAV sync reads XML (docs/PERFORMANCE.md, "Commands,
// exec → exit"). No libxml2 type crosses this header.

// What the parser found, in document order. `ns` is the element's namespace URI (NULL when it has
// none); `name` its local name; text (character data and CDATA) comes in pieces of `length` bytes
// of UTF-8.
struct nearcard_xml_events {
    void (*_Nonnull start)(void *_Nullable context, const char *_Nullable ns, const char *_Nonnull name);
    void (*_Nonnull text)(void *_Nullable context, const unsigned char *_Nonnull bytes, int length);
    void (*_Nonnull end)(void *_Nullable context);
};

enum nearcard_xml_result {
    NEARCARD_XML_WELL_FORMED = 0,
    // Not well-formed XML: the parser's first complaint is in `error`.
    NEARCARD_XML_MALFORMED = 1,
    // libxml2.so.2 cannot be loaded: the loader's reason is in `error`.
    NEARCARD_XML_NO_LIBRARY = 2,
};

// Parses `length` bytes (at most INT_MAX). No network access, no external DTD or entity is loaded,
// and no entity declared in the document is expanded (only XML's five predefined ones).
enum nearcard_xml_result nearcard_xml_parse(const unsigned char *_Nonnull data, size_t length,
                                            const struct nearcard_xml_events *_Nonnull events,
                                            void *_Nullable context, char *_Nonnull error, size_t error_length);
#endif
