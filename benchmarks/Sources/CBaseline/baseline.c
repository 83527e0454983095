#include "cbaseline.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <sodium.h>

int cb_init(void) { return sodium_init() < 0 ? -1 : 0; }

void *cb_p256_key_from_scalar(const uint8_t scalar[32]) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *d = BN_bin2bn(scalar, 32, NULL);
    EC_POINT *p = EC_POINT_new(group);
    uint8_t pub[65];
    EC_POINT_mul(group, p, d, NULL, NULL, NULL);
    EC_POINT_point2oct(group, p, POINT_CONVERSION_UNCOMPRESSED, pub, 65, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d);
    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 65);
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_fromdata_init(ctx);
    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEYPAIR, params);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EC_POINT_free(p);
    BN_free(d);
    EC_GROUP_free(group);
    return pkey;
}

int cb_p256_sign(void *key, const uint8_t *msg, size_t len, uint8_t *der, size_t *der_len) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 && EVP_DigestSign(md, der, der_len, msg, len) == 1;
    EVP_MD_CTX_free(md);
    return ok ? 0 : -1;
}

int cb_p256_verify(void *key, const uint8_t *msg, size_t len, const uint8_t *der, size_t der_len) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 && EVP_DigestVerify(md, der, der_len, msg, len) == 1;
    EVP_MD_CTX_free(md);
    return ok ? 0 : -1;
}

int cb_ed25519_sign(const uint8_t sk[64], const uint8_t *msg, size_t len, uint8_t sig[64]) {
    return crypto_sign_detached(sig, NULL, msg, len, sk);
}

int cb_ed25519_verify(const uint8_t pk[32], const uint8_t *msg, size_t len, const uint8_t sig[64]) {
    return crypto_sign_verify_detached(sig, msg, len, pk);
}

int cb_x25519(const uint8_t sk[32], const uint8_t pk[32], uint8_t out[32]) { return crypto_scalarmult(out, sk, pk); }

int cb_seal(const uint8_t *msg, size_t len, const uint8_t pk[32], uint8_t *out) { return crypto_box_seal(out, msg, len, pk); }

int cb_seal_open(const uint8_t *c, size_t len, const uint8_t pk[32], const uint8_t sk[32], uint8_t *out) {
    return crypto_box_seal_open(out, c, len, pk, sk);
}
