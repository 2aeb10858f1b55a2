#include "proxy/tls_ca.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

namespace vigil::proxy::tls {
namespace {

constexpr long kBackdateSeconds = 60 * 60;
constexpr long kValidSeconds = 24 * 60 * 60;

Error ssl_error(const std::string& what) {
  char buf[256] = {};
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  return make_error(Errc::kInternal, "TLS helper: " + what + ": " + buf);
}

KeyPtr new_key() {
  return KeyPtr(EVP_EC_gen("P-256"));
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate with a random serial, the validity window, `cn` as subject.
CertPtr new_cert(EVP_PKEY* key, const std::string& cn) {
  CertPtr cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return nullptr;
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  ASN1_INTEGER* sn = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  if (sn == nullptr) return nullptr;
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kBackdateSeconds);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValidSeconds);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("vigil session"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

bool is_ip(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

Result<std::unique_ptr<SessionCa>> SessionCa::create() {
  std::unique_ptr<SessionCa> ca(new SessionCa());
  ca->key_ = new_key();
  if (!ca->key_) return ssl_error("cannot make the session CA's key");
  ca->cert_ = new_cert(ca->key_.get(), "vigil session CA");
  if (!ca->cert_) return ssl_error("cannot make the session CA's certificate");
  X509* c = ca->cert_.get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  if (!add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(c, c, NID_subject_key_identifier, "hash")) {
    return ssl_error("cannot write the session CA's extensions");
  }
  if (X509_sign(c, ca->key_.get(), EVP_sha256()) == 0) return ssl_error("cannot sign the CA");
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr || PEM_write_bio_X509(bio, c) != 1) {
    BIO_free(bio);
    return ssl_error("cannot write the CA certificate");
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  ca->cert_pem_.assign(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return ca;
}

Result<const Leaf*> SessionCa::leaf_for(const std::string& host) {
  if (auto it = leaves_.find(host); it != leaves_.end()) return &it->second;
  Leaf leaf;
  leaf.key = new_key();
  if (!leaf.key) return ssl_error("cannot make a leaf key");
  leaf.cert = new_cert(leaf.key.get(), host.size() <= 64 ? host : "vigil leaf");
  if (!leaf.cert) return ssl_error("cannot make a leaf certificate");
  X509* c = leaf.cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(cert_.get()));
  const std::string san = (is_ip(host) ? "IP:" : "DNS:") + host;
  if (!add_ext(c, cert_.get(), NID_subject_alt_name, san.c_str()) ||
      !add_ext(c, cert_.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(c, cert_.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_ext(c, cert_.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(c, cert_.get(), NID_authority_key_identifier, "keyid:always")) {
    return ssl_error("cannot write a leaf's extensions for " + host);
  }
  if (X509_sign(c, key_.get(), EVP_sha256()) == 0) return ssl_error("cannot sign a leaf");
  auto [it, _] = leaves_.emplace(host, std::move(leaf));
  return &it->second;
}

}  // namespace vigil::proxy::tls
