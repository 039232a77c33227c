#include "CCrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// OpenSSL 3's EVP functions blectl calls, by the signatures <openssl/evp.h> declares
// (opaque pointers for EVP_CIPHER_CTX, EVP_CIPHER and ENGINE).
typedef struct CCryptoAPI {
    void *(*ctx_new)(void);
    void (*ctx_free)(void *ctx);
    const void *(*aes_128_ccm)(void);
    int (*decrypt_init)(void *ctx, const void *cipher, void *engine, const unsigned char *key, const unsigned char *iv);
    int (*ctx_ctrl)(void *ctx, int type, int arg, void *ptr);
    int (*decrypt_update)(void *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl);
} CCryptoAPI;

// EVP_CTRL_AEAD_SET_IVLEN and EVP_CTRL_AEAD_SET_TAG in <openssl/evp.h> (OpenSSL 1.1 and 3).
enum { CTRL_AEAD_SET_IVLEN = 0x9, CTRL_AEAD_SET_TAG = 0x11 };

static CCryptoAPI api;
static const CCryptoAPI *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Each function by its name in libcrypto.so.3; false with the error when one is missing.
static int resolve(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error, "libcrypto.so.3 lacks %s", name);
        return 0;
    }
    return 1;
}

static void load(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libcrypto.so.3 not found");
        return;
    }
    int ok = resolve(library, (void **)&api.ctx_new, "EVP_CIPHER_CTX_new")
        && resolve(library, (void **)&api.ctx_free, "EVP_CIPHER_CTX_free")
        && resolve(library, (void **)&api.aes_128_ccm, "EVP_aes_128_ccm")
        && resolve(library, (void **)&api.decrypt_init, "EVP_DecryptInit_ex")
        && resolve(library, (void **)&api.ctx_ctrl, "EVP_CIPHER_CTX_ctrl")
        && resolve(library, (void **)&api.decrypt_update, "EVP_DecryptUpdate");
    if (ok) loaded = &api;
}

const char *ccrypto_load_error(void) {
    pthread_once(&once, load);
    return loaded == NULL ? load_error : NULL;
}

CCryptoResult ccrypto_aes128_ccm_decrypt(const uint8_t *key, const uint8_t *nonce, const uint8_t *ciphertext,
                                         size_t length, const uint8_t *tag, uint8_t *out) {
    if (ccrypto_load_error() != NULL || length == 0 || length > 0xFFFF) return CCRYPTO_UNAVAILABLE;
    void *ctx = loaded->ctx_new();
    if (ctx == NULL) return CCRYPTO_UNAVAILABLE;
    // CCM decryption in one update: the cipher, then the nonce's and tag's lengths, then key
    // and nonce; EVP_DecryptUpdate checks the tag and answers <= 0 when it does not match.
    uint8_t tag_copy[4];
    memcpy(tag_copy, tag, sizeof tag_copy);
    CCryptoResult result = CCRYPTO_UNAVAILABLE;
    int written = 0;
    if (loaded->decrypt_init(ctx, loaded->aes_128_ccm(), NULL, NULL, NULL) == 1
        && loaded->ctx_ctrl(ctx, CTRL_AEAD_SET_IVLEN, 13, NULL) == 1
        && loaded->ctx_ctrl(ctx, CTRL_AEAD_SET_TAG, 4, tag_copy) == 1
        && loaded->decrypt_init(ctx, NULL, NULL, key, nonce) == 1) {
        int ok = loaded->decrypt_update(ctx, out, &written, ciphertext, (int)length);
        result = ok > 0 && written == (int)length ? CCRYPTO_DECRYPTED : CCRYPTO_TAG_MISMATCH;
    }
    if (result != CCRYPTO_DECRYPTED) memset(out, 0, length);
    loaded->ctx_free(ctx);
    return result;
}
