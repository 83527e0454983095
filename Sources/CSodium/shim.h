#ifndef NEARCARD_CSODIUM_SHIM_H
#define NEARCARD_CSODIUM_SHIM_H
#include <sodium.h>
#endif
