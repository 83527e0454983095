#define _GNU_SOURCE
#include "cbaseline.h"
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
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

int cb_x25519_keypair(uint8_t pk[32], uint8_t sk[32]) { return crypto_box_keypair(pk, sk); }

// ---- loopback round trip ------------------------------------------------------------------------
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t cb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *cb_echo(void *arg) {
    int fd = *(int *)arg;
    char c;
    while (read(fd, &c, 1) == 1) {
        if (write(fd, &c, 1) != 1) break;
    }
    return NULL;
}

static int cb_cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t cb_loopback_rtt_ns(int rounds) {
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof addr;
    if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&addr, &alen)) return -1;
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&addr, sizeof addr)) return -1;
    int s = accept(ls, NULL, NULL);
    close(ls);
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_t t;
    pthread_create(&t, NULL, cb_echo, &s);
    int64_t *times = malloc(sizeof(int64_t) * rounds);
    char b = 'x';
    for (int i = 0; i < rounds; i++) {
        int64_t t0 = cb_now();
        if (write(c, &b, 1) != 1 || read(c, &b, 1) != 1) { free(times); return -1; }
        times[i] = cb_now() - t0;
    }
    close(c);
    pthread_join(t, NULL);
    close(s);
    qsort(times, rounds, sizeof(int64_t), cb_cmp64);
    int64_t median = times[rounds / 2];
    free(times);
    return median;
}

// ---- TLS 1.3 client (libssl) --------------------------------------------------------------------
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>

static void cb_ssl_error(char *err, size_t len, const char *what) {
    unsigned long e = ERR_get_error();
    snprintf(err, len, "%s: %s", what, e ? ERR_reason_error_string(e) : "failed");
}

void *cb_tls_client_ctx(const char *cert, const char *key, const char *ca, char *err, size_t err_len) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) { cb_ssl_error(err, err_len, "SSL_CTX_new"); return NULL; }
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);  // every connection a full handshake
    if (SSL_CTX_use_certificate_file(ctx, cert, SSL_FILETYPE_PEM) != 1 || SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        cb_ssl_error(err, err_len, "client certificate"); SSL_CTX_free(ctx); return NULL;
    }
    if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) { cb_ssl_error(err, err_len, "CA file"); SSL_CTX_free(ctx); return NULL; }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

int64_t cb_tls_connection_ns(void *vctx, int port, char *err, size_t err_len) {
    SSL_CTX *ctx = vctx;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1;
    int64_t t0 = cb_now();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) { snprintf(err, err_len, "connect failed"); if (fd >= 0) close(fd); return -1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    int64_t result = -1;
    char line[64];
    if (SSL_connect(ssl) != 1) {
        cb_ssl_error(err, err_len, "handshake");
    } else if (SSL_write(ssl, "nearcard\n", 9) != 9) {
        cb_ssl_error(err, err_len, "write");
    } else {
        // Read the server's answer (s_server -rev echoes the line reversed): only after it has
        // checked our certificate and Finished does the server process application data.
        int got = 0, n;
        while (got < (int)sizeof line && (n = SSL_read(ssl, line + got, (int)sizeof line - got)) > 0) {
            got += n;
            if (memchr(line, '\n', got)) break;
        }
        if (got > 0 && memchr(line, '\n', got)) result = cb_now() - t0;
        else cb_ssl_error(err, err_len, "read");
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
    return result;
}

int cb_pin_process(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpu >= 0) {
        if (cpu >= online) return -1;
        CPU_SET(cpu, &set);
    } else {
        for (long c = 0; c < online && c < CPU_SETSIZE; c++) CPU_SET((int)c, &set);
    }
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    int changed = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        if (sched_setaffinity(tid, sizeof set, &set) == 0) changed++;
    }
    closedir(dir);
    return changed;
}

int cb_presence_resolve(const uint8_t *tags, size_t count, const uint8_t *keys, size_t nkeys, int32_t *out) {
    int matched = 0;
    for (size_t t = 0; t < count; t++) {
        const uint8_t *tag = tags + 16 * t;
        uint8_t mac[crypto_shorthash_siphash24_BYTES];
        out[t] = -1;
        for (size_t k = 0; k < nkeys; k++) {
            crypto_shorthash_siphash24(mac, tag, 8, keys + 16 * k);
            if (sodium_memcmp(mac, tag + 8, 8) == 0) { out[t] = (int32_t)k; matched++; break; }
        }
    }
    return matched;
}
