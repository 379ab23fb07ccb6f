#include "etcd/tls.hpp"

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "etcd/socket_wait.hpp"
#include "util/shared_library.hpp"

namespace aml::etcd {

// OpenSSL's functions by their C signatures (opaque pointers: no OpenSSL headers needed to
// build). The same in OpenSSL 1.1 and 3.
struct TlsApi {
  const void* (*TLS_client_method)();
  void* (*SSL_CTX_new)(const void*);
  void (*SSL_CTX_free)(void*);
  int (*SSL_CTX_load_verify_locations)(void*, const char*, const char*);
  int (*SSL_CTX_set_default_verify_paths)(void*);
  int (*SSL_CTX_use_certificate_chain_file)(void*, const char*);
  int (*SSL_CTX_use_PrivateKey_file)(void*, const char*, int);
  int (*SSL_CTX_check_private_key)(const void*);
  void (*SSL_CTX_set_verify)(void*, int, void*);
  long (*SSL_CTX_ctrl)(void*, int, long, void*);
  void* (*SSL_new)(void*);
  void (*SSL_free)(void*);
  int (*SSL_set_fd)(void*, int);
  int (*SSL_connect)(void*);
  int (*SSL_read)(void*, void*, int);
  int (*SSL_write)(void*, const void*, int);
  int (*SSL_get_error)(const void*, int);
  int (*SSL_pending)(const void*);
  long (*SSL_ctrl)(void*, int, long, void*);
  int (*SSL_set1_host)(void*, const char*);
  int (*SSL_set_alpn_protos)(void*, const unsigned char*, unsigned);
  void (*SSL_get0_alpn_selected)(const void*, const unsigned char**, unsigned*);
  void* (*SSL_get0_param)(void*);
  int (*X509_VERIFY_PARAM_set1_ip_asc)(void*, const char*);
  long (*SSL_get_verify_result)(const void*);
  const char* (*X509_verify_cert_error_string)(long);
  unsigned long (*ERR_get_error)();
  void (*ERR_error_string_n)(unsigned long, char*, std::size_t);
  void (*ERR_clear_error)();
};

namespace {

// OpenSSL's constants (stable across 1.1 and 3).
constexpr int kFiletypePem = 1;
constexpr int kVerifyPeer = 1;
constexpr int kCtrlMode = 33;
constexpr long kModePartialWrite = 1, kModeMovingBuffer = 2;
constexpr int kCtrlSetMinProtoVersion = 123;
constexpr long kTls12 = 0x0303;
constexpr int kCtrlSetTlsextHostname = 55;
constexpr int kErrorSsl = 1, kWantRead = 2, kWantWrite = 3, kErrorSyscall = 5, kZeroReturn = 6;

Result<TlsApi> load_tls_api() {
  auto handle = open_library({"tls",
                              "OpenSSL's libssl",
                              "AML_TLS_LIBRARY",
                              {"libssl.so.3", "libssl.so.1.1", "libssl.so"}});
  if (!handle) return handle.error();
  TlsApi api{};
  SymbolTable table(*handle);
#define AML_BIND(name) table.bind(api.name, #name)
  AML_BIND(TLS_client_method);
  AML_BIND(SSL_CTX_new);
  AML_BIND(SSL_CTX_free);
  AML_BIND(SSL_CTX_load_verify_locations);
  AML_BIND(SSL_CTX_set_default_verify_paths);
  AML_BIND(SSL_CTX_use_certificate_chain_file);
  AML_BIND(SSL_CTX_use_PrivateKey_file);
  AML_BIND(SSL_CTX_check_private_key);
  AML_BIND(SSL_CTX_set_verify);
  AML_BIND(SSL_CTX_ctrl);
  AML_BIND(SSL_new);
  AML_BIND(SSL_free);
  AML_BIND(SSL_set_fd);
  AML_BIND(SSL_connect);
  AML_BIND(SSL_read);
  AML_BIND(SSL_write);
  AML_BIND(SSL_get_error);
  AML_BIND(SSL_pending);
  AML_BIND(SSL_ctrl);
  AML_BIND(SSL_set1_host);
  AML_BIND(SSL_set_alpn_protos);
  AML_BIND(SSL_get0_alpn_selected);
  AML_BIND(SSL_get0_param);
  AML_BIND(X509_VERIFY_PARAM_set1_ip_asc);
  AML_BIND(SSL_get_verify_result);
  AML_BIND(X509_verify_cert_error_string);
  AML_BIND(ERR_get_error);
  AML_BIND(ERR_error_string_n);
  AML_BIND(ERR_clear_error);
#undef AML_BIND
  if (!table.missing().empty()) {
    return invalid("tls", "OpenSSL's libssl",
                   "OpenSSL 1.1 or later (missing: " + table.missing() + ")");
  }
  return api;
}

// OpenSSL's queued errors as one line (and the queue emptied).
std::string openssl_errors(const TlsApi& api) {
  std::string text;
  while (unsigned long code = api.ERR_get_error()) {
    char line[256];
    api.ERR_error_string_n(code, line, sizeof(line));
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? "no detail" : text;
}

bool is_ip_address(const std::string& host) {
  unsigned char raw[16];
  return inet_pton(AF_INET, host.c_str(), raw) == 1 || inet_pton(AF_INET6, host.c_str(), raw) == 1;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::create(const std::string& ca_file,
                                                       const std::string& cert_file,
                                                       const std::string& key_file) {
  auto api = load_once<TlsApi>(load_tls_api);
  if (!api) return api.error();
  const TlsApi& a = **api;
  a.ERR_clear_error();
  void* ctx = a.SSL_CTX_new(a.TLS_client_method());
  if (ctx == nullptr)
    return invalid("tls", "SSL_CTX_new", "a TLS context (" + openssl_errors(a) + ")");
  std::shared_ptr<TlsContext> context(new TlsContext(&a, ctx));
  a.SSL_CTX_ctrl(ctx, kCtrlSetMinProtoVersion, kTls12, nullptr);
  a.SSL_CTX_ctrl(ctx, kCtrlMode, kModePartialWrite | kModeMovingBuffer, nullptr);
  a.SSL_CTX_set_verify(ctx, kVerifyPeer, nullptr);
  const int trusted = ca_file.empty()
                          ? a.SSL_CTX_set_default_verify_paths(ctx)
                          : a.SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
  if (trusted != 1) {
    return invalid("cacert", ca_file.empty() ? "the system's CAs" : ca_file,
                   "CA certificates in PEM (" + openssl_errors(a) + ")");
  }
  if (!cert_file.empty()) {
    if (a.SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
      return invalid("cert", cert_file, "a client certificate in PEM (" + openssl_errors(a) + ")");
    }
    if (a.SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), kFiletypePem) != 1 ||
        a.SSL_CTX_check_private_key(ctx) != 1) {
      return invalid("key", key_file,
                     "the client certificate's private key in PEM (" + openssl_errors(a) + ")");
    }
  }
  return context;
}

TlsContext::~TlsContext() { api_->SSL_CTX_free(ctx_); }

Result<std::unique_ptr<TlsStream>> TlsStream::connect(std::shared_ptr<TlsContext> context, int fd,
                                                      const std::string& host,
                                                      const std::string& where,
                                                      Clock::time_point deadline,
                                                      std::string_view alpn) {
  const TlsApi& a = *context->api_;
  a.ERR_clear_error();
  void* ssl = a.SSL_new(context->ctx_);
  if (ssl == nullptr) return invalid("etcd", where, "a TLS session (" + openssl_errors(a) + ")");
  std::unique_ptr<TlsStream> stream(new TlsStream(context, ssl, where));
  a.SSL_set_fd(ssl, fd);
  // The member's certificate must name the host it was reached by.
  if (is_ip_address(host)) {
    a.X509_VERIFY_PARAM_set1_ip_asc(a.SSL_get0_param(ssl), host.c_str());
  } else {
    a.SSL_ctrl(ssl, kCtrlSetTlsextHostname, 0, const_cast<char*>(host.c_str()));
    a.SSL_set1_host(ssl, host.c_str());
  }
  if (!alpn.empty()) {
    // ALPN's list: each protocol's name after its length.
    std::string offered(1, static_cast<char>(alpn.size()));
    offered += alpn;
    a.SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(offered.data()),
                          static_cast<unsigned>(offered.size()));
  }
  for (;;) {
    const int result = a.SSL_connect(ssl);
    if (result == 1) return stream;
    const int error = a.SSL_get_error(ssl, result);
    if (error == kWantRead || error == kWantWrite) {
      if (!ready(fd, error == kWantRead ? POLLIN : POLLOUT, deadline)) {
        return invalid("etcd", where, "a TLS handshake in time");
      }
      continue;
    }
    if (long verified = a.SSL_get_verify_result(ssl); verified != 0) {
      return invalid(std::string(kTlsRefusal), where,
                     std::string("a member whose certificate the CA vouches for, for ") + host +
                         " (" + a.X509_verify_cert_error_string(verified) + ")");
    }
    const std::string detail = openssl_errors(a);
    return invalid(error == kErrorSsl ? std::string(kTlsRefusal) : "etcd", where,
                   "a TLS handshake (" +
                       (error == kErrorSyscall && detail == "no detail"
                            ? std::string("the member closed the connection: does it speak TLS, "
                                          "and does it want a client certificate?")
                            : detail) +
                       ")");
  }
}

TlsStream::~TlsStream() { context_->api_->SSL_free(ssl_); }

std::string TlsStream::protocol() const {
  const unsigned char* name = nullptr;
  unsigned size = 0;
  context_->api_->SSL_get0_alpn_selected(ssl_, &name, &size);
  return name ? std::string(reinterpret_cast<const char*>(name), size) : "";
}

bool TlsStream::pending() const { return context_->api_->SSL_pending(ssl_) > 0; }

Result<std::size_t> TlsStream::failed(int result, const char* doing) {
  const TlsApi& a = *context_->api_;
  const int error = a.SSL_get_error(ssl_, result);
  if (error == kWantRead || error == kWantWrite) {
    wants_ = error == kWantRead ? POLLIN : POLLOUT;
    return std::size_t{0};
  }
  if (error == kZeroReturn || (error == kErrorSyscall && errno == 0)) {
    return invalid("etcd", where_, std::string(doing) + " (the connection closed)");
  }
  if (error == kErrorSsl) {  // an alert: the member refused this client (its certificate)
    return invalid(std::string(kTlsRefusal), where_,
                   std::string(doing) + " (TLS: " + openssl_errors(a) +
                       "; does etcd take this client certificate?)");
  }
  return invalid("etcd", where_,
                 std::string(doing) + " (TLS: " + std::strerror(errno) +
                     "; does etcd take this client certificate?)");
}

Result<std::size_t> TlsStream::write(std::string_view data) {
  context_->api_->ERR_clear_error();
  errno = 0;
  const int size = static_cast<int>(std::min<std::size_t>(data.size(), INT_MAX));
  const int n = context_->api_->SSL_write(ssl_, data.data(), size);
  if (n > 0) return static_cast<std::size_t>(n);
  return failed(n, "to take a request");
}

Result<std::size_t> TlsStream::read(char* buffer, std::size_t size) {
  context_->api_->ERR_clear_error();
  const int n = context_->api_->SSL_read(ssl_, buffer,
                                         static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (n > 0) return static_cast<std::size_t>(n);
  errno = 0;
  return failed(n, "an answer");
}

}  // namespace aml::etcd
