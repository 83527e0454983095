#ifndef NEARCARD_CQREncode_SHIM_H
#define NEARCARD_CQREncode_SHIM_H
#include <qrencode.h>
#endif
