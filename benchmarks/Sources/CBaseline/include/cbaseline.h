// The floor for Nearcard's crypto benchmarks: each primitive called directly through its C library,
// the way a C program would, with keys prepared once. Every function returns 0 on success.
#ifndef NEARCARD_CBASELINE_H
#define NEARCARD_CBASELINE_H
#include <stddef.h>
#include <stdint.h>

int cb_init(void);

// ECDSA P-256 / SHA-256 through OpenSSL's EVP interface (DER signatures, as libcrypto makes them).
void *cb_p256_key_from_scalar(const uint8_t scalar[32]);
int cb_p256_sign(void *key, const uint8_t *msg, size_t len, uint8_t *der, size_t *der_len);
int cb_p256_verify(void *key, const uint8_t *msg, size_t len, const uint8_t *der, size_t der_len);

// libsodium.
int cb_ed25519_sign(const uint8_t sk[64], const uint8_t *msg, size_t len, uint8_t sig[64]);
int cb_ed25519_verify(const uint8_t pk[32], const uint8_t *msg, size_t len, const uint8_t sig[64]);
int cb_x25519(const uint8_t sk[32], const uint8_t pk[32], uint8_t out[32]);
int cb_seal(const uint8_t *msg, size_t len, const uint8_t pk[32], uint8_t *out);
int cb_seal_open(const uint8_t *c, size_t len, const uint8_t pk[32], const uint8_t sk[32], uint8_t *out);
int cb_x25519_keypair(uint8_t pk[32], uint8_t sk[32]);

// Presence tags (PROTOCOL.md §3): for each of `count` 16-byte tags (nonce ‖ MAC), the index of the
// first of `nkeys` 16-byte keys whose SipHash-2-4 of the nonce is the MAC (sodium_memcmp), or -1.
// Returns how many tags matched a key.
int cb_presence_resolve(const uint8_t *tags, size_t count, const uint8_t *keys, size_t nkeys, int32_t *out);

// One loopback TCP round trip (1 byte each way) between this thread and an echo thread, over a
// connection set up once. Returns the median of `rounds` round trips in nanoseconds, or -1.
int64_t cb_loopback_rtt_ns(int rounds);

// TLS 1.3 through libssl: a client context with a certificate (mutual authentication), and one
// fresh connection to 127.0.0.1:port: TCP connect, full handshake, one line sent and its answer read
// (so the server has verified our certificate), close. Returns nanoseconds, or -1 with a reason in err.
void *cb_tls_client_ctx(const char *cert, const char *key, const char *ca, char *err, size_t err_len);
int64_t cb_tls_connection_ns(void *ctx, int port, char *err, size_t err_len);

// Sets the CPU affinity of every thread of this process (and so of threads it starts later): to the
// one CPU `cpu`, or to every online CPU when cpu < 0. Returns the number of threads changed, -1 on error.
int cb_pin_process(int cpu);
#endif
