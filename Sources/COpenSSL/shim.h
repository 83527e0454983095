#ifndef NEARCARD_COPENSSL_SHIM_H
#define NEARCARD_COPENSSL_SHIM_H
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

// EVP_PKEY_PUBLIC_KEY and EVP_PKEY_KEYPAIR are macros built from other macros, which Swift
// does not import; these shims expose their values.
static inline int nearcard_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int nearcard_evp_pkey_keypair_selection(void) { return EVP_PKEY_KEYPAIR; }
#endif
