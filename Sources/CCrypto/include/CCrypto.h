#ifndef BLECTL_CCRYPTO_H
#define BLECTL_CCRYPTO_H

// AES-128-CCM decryption from OpenSSL's libcrypto (Debian's libssl3, libcrypto.so.3), loaded
// with dlopen(3) the first time a bind key is used, not linked: blectl starts without paying
// for it, and a system without libcrypto.so.3 runs every command, decrypting nothing. The few
// libcrypto functions needed are declared in CCrypto.c by the signatures of OpenSSL 3's
// <openssl/evp.h>, so no OpenSSL header is needed to build.
#include <stddef.h>
#include <stdint.h>

// What ccrypto_aes128_ccm_decrypt made of a frame.
typedef enum CCryptoResult {
    // The tag matched: `out` holds the plaintext.
    CCRYPTO_DECRYPTED = 0,
    // The tag did not match (a wrong key, or forged or damaged data): `out` is zeroed.
    CCRYPTO_TAG_MISMATCH = 1,
    // libcrypto.so.3 could not be loaded or lacks a function (ccrypto_load_error says why),
    // or it failed to set the cipher up.
    CCRYPTO_UNAVAILABLE = 2,
} CCryptoResult;

// Decrypts and authenticates `length` bytes of AES-128-CCM ciphertext (no associated data)
// with a 13-byte nonce and a 4-byte tag, as BTHome v2 encrypts (bthome.io/encryption).
// `key` is 16 bytes, `nonce` 13, `tag` 4; `out` has room for `length` bytes (length >= 1).
// Thread-safe; the library is loaded once.
CCryptoResult ccrypto_aes128_ccm_decrypt(const uint8_t *key, const uint8_t *nonce, const uint8_t *ciphertext,
                                         size_t length, const uint8_t *tag, uint8_t *out);

// Loads libcrypto.so.3 if not done yet. Returns NULL when it is usable, else why not
// (dlerror(3)'s message, or the missing function), a string that stays valid.
const char *ccrypto_load_error(void);

#endif
