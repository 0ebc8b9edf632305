// Test keys generated with OpenSSL 3.0 for these tests only (public halves; the private keys were discarded).
// openssl genrsa -out k.pem <bits>; openssl rsa -in k.pem -pubout -outform DER | base64 -w0

/** 2048-bit RSA key as SubjectPublicKeyInfo (what DKIM tooling publishes). */
export const RSA_2048_SPKI =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvD1sHrbSXGkIDFZb0BdyAg1Zou0iwCbPw+jN3wDWDkZusz89Q7rm/Pg2RGT5fMdTf22BFESqR81173wPx20mqiyLEo9o9p7X+/ZWKxhrSY4haxkiMeKm8CWK+2UiblSV+NhIJWZ5+IRSIgqKaCSRLk0ZzEm2tA8qfW/4ud/WtlEvAGMoxRLHYZbpQrZjS3l9qoc0Q/iTgq3jMN97rm1zwQlyI+s4DlBoKuECBQTqCQsJuxkz6F1eKhfGvp3a/qFxx7uwNlsLRl19JN+fGvzmgzmnIh3ZifYkoiuzgW7X9OuDa2f8kEXRPuO9XNx8IjexvJtbAclO5OjyEb4xHgtU4QIDAQAB'

/** 1024-bit RSA key as SubjectPublicKeyInfo (what DKIM tooling publishes). */
export const RSA_1024_SPKI =
  'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDiq5pWuBHpfe6xcq5iab9NiAg6pbKV8uVG7NfffxfgQhtTSQzV4DYQziJUI1VxmbCpHatFHDDBLQj1mCsTyLhDLby+YgjxTIM2ZUJsEvA2+G5LYz6h1dy4By3G4UZ+DiFNYFs/sFrG5V5wkyq6aSW+/yIrCKADKUHhNGxOyqgVeQIDAQAB'

/** 512-bit RSA key as SubjectPublicKeyInfo (what DKIM tooling publishes). */
export const RSA_512_SPKI =
  'MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBALxPpGvcljQdO5z0Cefw2oiXZBjZNi+kywjVeiZ4MXzhznmND/oUIBSpk1JjsBCER91FVNMjpkBeE4dcqFIGpskCAwEAAQ=='

/** The same 2048-bit key as a bare PKCS#1 RSAPublicKey (openssl rsa -RSAPublicKey_out). */
export const RSA_2048_PKCS1 =
  'MIIBCgKCAQEAvD1sHrbSXGkIDFZb0BdyAg1Zou0iwCbPw+jN3wDWDkZusz89Q7rm/Pg2RGT5fMdTf22BFESqR81173wPx20mqiyLEo9o9p7X+/ZWKxhrSY4haxkiMeKm8CWK+2UiblSV+NhIJWZ5+IRSIgqKaCSRLk0ZzEm2tA8qfW/4ud/WtlEvAGMoxRLHYZbpQrZjS3l9qoc0Q/iTgq3jMN97rm1zwQlyI+s4DlBoKuECBQTqCQsJuxkz6F1eKhfGvp3a/qFxx7uwNlsLRl19JN+fGvzmgzmnIh3ZifYkoiuzgW7X9OuDa2f8kEXRPuO9XNx8IjexvJtbAclO5OjyEb4xHgtU4QIDAQAB'

/** Ed25519 public key: the bare 32 bytes RFC 8463 §4.2 asks for, and the same key as SubjectPublicKeyInfo. */
export const ED25519_RAW = '23peC1a/NlHyRX3/HwZ6ihXVa6CJlbmnJ2RBT6+AIjQ='
export const ED25519_SPKI = 'MCowBQYDK2VwAyEA23peC1a/NlHyRX3/HwZ6ihXVa6CJlbmnJ2RBT6+AIjQ='
