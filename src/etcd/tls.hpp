// TLS to etcd's members (DESIGN §5) through the image's OpenSSL (libssl.so.3 or .so.1.1),
// opened at run time as MPI and NCCL are: the release still needs glibc alone, and a job that
// does not ask for TLS never loads it. The peer is verified against the CA given (or the
// system's) and the member's host name or IP address; TLS 1.2 at least.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace aml::etcd {

struct TlsApi;  // OpenSSL's functions, loaded once (tls.cpp)

// The variable of an error where TLS itself refused (a certificate not vouched for, an alert
// from the member): no other member or later try would do better.
inline constexpr std::string_view kTlsRefusal = "etcd TLS";

// The settings every connection of a session shares (OpenSSL's SSL_CTX).
class TlsContext {
 public:
  // ca_file "": the system's trusted CAs. cert_file/key_file "": no client certificate.
  static Result<std::shared_ptr<TlsContext>> create(const std::string& ca_file,
                                                    const std::string& cert_file,
                                                    const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

 private:
  friend class TlsStream;
  TlsContext(const TlsApi* api, void* ctx) : api_(api), ctx_(ctx) {}
  const TlsApi* api_;
  void* ctx_;
};

// One TLS connection over a connected non-blocking socket (not owned).
class TlsStream {
 public:
  using Clock = std::chrono::steady_clock;
  // The handshake, by the deadline; `host` is what the member's certificate must name, alpn
  // the application protocol offered ("h2"; "" none).
  static Result<std::unique_ptr<TlsStream>> connect(std::shared_ptr<TlsContext> context, int fd,
                                                    const std::string& host,
                                                    const std::string& where,
                                                    Clock::time_point deadline,
                                                    std::string_view alpn = {});
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Bytes moved; 0 when the socket must first be ready for wants() (POLLIN or POLLOUT). An
  // error when the connection failed or closed.
  Result<std::size_t> write(std::string_view data);
  Result<std::size_t> read(char* buffer, std::size_t size);
  short wants() const { return wants_; }
  bool pending() const;
  std::string protocol() const;  // the application protocol agreed (ALPN; "" none)  // decrypted
                                 // bytes wait inside: read before polling the socket

 private:
  TlsStream(std::shared_ptr<TlsContext> context, void* ssl, std::string where)
      : context_(std::move(context)), ssl_(ssl), where_(std::move(where)) {}
  // 0 for a retry (wants_ set), else the error.
  Result<std::size_t> failed(int result, const char* doing);

  std::shared_ptr<TlsContext> context_;
  void* ssl_;
  std::string where_;
  short wants_ = 0;
};

}  // namespace aml::etcd
