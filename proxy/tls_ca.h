// The TLS helper's per-session certificate authority: an EC P-256 key and a self-signed
// CA certificate made in memory when the helper starts, and a leaf certificate per host
// name (cached) signed by it. The key never leaves the helper's memory: only the CA's
// certificate (PEM) is handed out, for the command's trust bundle. Valid for a day (a
// session CA needs no longer), with a small backdate for clock skew.
//
// Used only inside vigil-tls (proxy/tls_helper_main.cc), the one binary that links
// OpenSSL on the session's path. Not thread-safe: one io_context thread.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <map>
#include <memory>
#include <string>

#include "supervisor/core/base/result.h"

namespace vigil::proxy::tls {

struct EvpKeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, EvpKeyFree>;
using CertPtr = std::unique_ptr<X509, X509Free>;

struct Leaf {
  CertPtr cert;
  KeyPtr key;  // the CA's key is not reused for leaves
};

class SessionCa {
 public:
  static Result<std::unique_ptr<SessionCa>> create();
  // The CA certificate, PEM.
  const std::string& cert_pem() const { return cert_pem_; }
  // The leaf for `host` (a DNS name or an IP literal), made once and kept.
  Result<const Leaf*> leaf_for(const std::string& host);

 private:
  SessionCa() = default;
  KeyPtr key_;
  CertPtr cert_;
  std::string cert_pem_;
  std::map<std::string, Leaf> leaves_;
};

}  // namespace vigil::proxy::tls
