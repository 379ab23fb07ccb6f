#include "etcd/grpc_channel.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "etcd/etcd_protobuf.hpp"
#include "etcd/http2_abi.hpp"
#include "util/hex.hpp"
#include "util/shared_library.hpp"

namespace aml::etcd {

namespace {

// An answer's window: etcd's answers (a range of a thousand keys) arrive without waiting on
// window updates.
constexpr std::int32_t kWindow = 16 << 20;
constexpr std::size_t kMaxGrpcAnswer = 64u << 20;

Result<h2::Api> load_h2_api() {
  auto handle = open_library({"etcd gRPC",
                              "libnghttp2 (HTTP/2)",
                              "AML_HTTP2_LIBRARY",
                              {"libnghttp2.so.14", "libnghttp2.so"}});
  if (!handle) return handle.error();
  h2::Api api{};
  SymbolTable table(*handle);
  table.bind(api.session_callbacks_new, "nghttp2_session_callbacks_new");
  table.bind(api.session_callbacks_del, "nghttp2_session_callbacks_del");
  table.bind(api.set_on_header_callback, "nghttp2_session_callbacks_set_on_header_callback");
  table.bind(api.set_on_data_callback, "nghttp2_session_callbacks_set_on_data_chunk_recv_callback");
  table.bind(api.set_on_stream_close_callback,
             "nghttp2_session_callbacks_set_on_stream_close_callback");
  table.bind(api.session_client_new, "nghttp2_session_client_new");
  table.bind(api.session_del, "nghttp2_session_del");
  table.bind(api.submit_settings, "nghttp2_submit_settings");
  table.bind(api.set_local_window_size, "nghttp2_session_set_local_window_size");
  table.bind(api.submit_request, "nghttp2_submit_request");
  table.bind(api.mem_send, "nghttp2_session_mem_send");
  table.bind(api.mem_recv, "nghttp2_session_mem_recv");
  table.bind(api.want_read, "nghttp2_session_want_read");
  table.bind(api.want_write, "nghttp2_session_want_write");
  table.bind(api.strerror, "nghttp2_strerror");
  if (!table.missing().empty()) {
    return invalid("etcd gRPC", "libnghttp2",
                   "libnghttp2 1.12 or later (missing: " + table.missing() + ")");
  }
  return api;
}

using Call = GrpcChannel::Call;

int on_header(h2::Session*, const h2::FrameHead* frame, const std::uint8_t* name,
              std::size_t name_size, const std::uint8_t* value, std::size_t value_size,
              std::uint8_t, void* user) {
  auto& call = *static_cast<Call*>(user);
  if (frame->stream_id != call.stream) return 0;
  const std::string_view header(reinterpret_cast<const char*>(name), name_size);
  const std::string text(reinterpret_cast<const char*>(value), value_size);
  if (header == "grpc-status") call.grpc_status = text;
  if (header == "grpc-message") call.grpc_message = text;
  if (header == ":status") call.http_status = text;
  return 0;
}

int on_data(h2::Session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
            std::size_t size, void* user) {
  auto& call = *static_cast<Call*>(user);
  if (stream != call.stream) return 0;
  if (call.answer.size() + size > kMaxGrpcAnswer) return h2::kErrorCallbackFailure;
  call.answer.append(reinterpret_cast<const char*>(data), size);
  return 0;
}

int on_stream_close(h2::Session*, std::int32_t stream, std::uint32_t code, void* user) {
  auto& call = *static_cast<Call*>(user);
  if (stream != call.stream) return 0;
  call.closed = true;
  call.reset_code = code;
  return 0;
}

ssize_t read_request(h2::Session*, std::int32_t, std::uint8_t* buffer, std::size_t size,
                     std::uint32_t* flags, h2::DataSource* source, void*) {
  auto& call = *static_cast<Call*>(source->ptr);
  const std::size_t n = std::min(size, call.request.size() - call.sent);
  std::memcpy(buffer, call.request.data() + call.sent, n);
  call.sent += n;
  if (call.sent == call.request.size()) *flags |= h2::kDataFlagEof;
  return static_cast<ssize_t>(n);
}

// grpc-message is percent-encoded; a '%' without two hex digits after it stays as it came.
std::string percent_decoded(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::string byte = text[i] == '%' ? from_hex(text.substr(i + 1, 2)) : "";
    if (byte.size() == 1) {
      out += byte;
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

h2::Header header(std::string_view name, std::string_view value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), h2::kHeaderFlagNone};
}

}  // namespace

std::string GrpcChannel::unavailable() {
  auto api = load_once<h2::Api>(load_h2_api);
  return api ? "" : api.error().message();
}

Result<std::unique_ptr<GrpcChannel>> GrpcChannel::open(const std::string& host, int port,
                                                       Clock::time_point deadline,
                                                       const std::shared_ptr<TlsContext>& tls) {
  auto api = load_once<h2::Api>(load_h2_api);
  if (!api) return api.error();
  auto socket = MemberSocket::connect(host, port, deadline, tls, "h2");
  if (!socket) return socket.error();
  if (socket->tls && socket->tls->protocol() != "h2") {
    return invalid("etcd", socket->where, "HTTP/2 offered over TLS (ALPN h2), for etcd's gRPC API");
  }
  const h2::Api& a = **api;
  std::unique_ptr<GrpcChannel> channel(new GrpcChannel(&a, std::move(*socket)));
  h2::Callbacks* callbacks = nullptr;
  if (a.session_callbacks_new(&callbacks) != 0) return channel->failure("an HTTP/2 session");
  a.set_on_header_callback(callbacks, on_header);
  a.set_on_data_callback(callbacks, on_data);
  a.set_on_stream_close_callback(callbacks, on_stream_close);
  h2::Session* session = nullptr;
  const int made = a.session_client_new(&session, callbacks, &channel->call_);
  a.session_callbacks_del(callbacks);
  if (made != 0) return channel->failure("an HTTP/2 session");
  channel->session_ = session;
  const h2::Setting settings[] = {{h2::kSettingsEnablePush, 0},
                                  {h2::kSettingsInitialWindowSize, kWindow}};
  a.submit_settings(session, h2::kFlagNone, settings, std::size(settings));
  a.set_local_window_size(session, h2::kFlagNone, 0, kWindow);
  if (auto sent = channel->flush(deadline); !sent) return sent.error();
  return channel;
}

GrpcChannel::~GrpcChannel() {
  if (session_) api_->session_del(session_);
}

Error GrpcChannel::failure(const std::string& what) const {
  return invalid("etcd", socket_.where, what);
}

Result<bool> GrpcChannel::flush(Clock::time_point deadline) {
  h2::Session* session = session_;
  for (;;) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = api_->mem_send(session, &data);
    if (n < 0) return failure(std::string("HTTP/2 to go on (") + api_->strerror(int(n)) + ")");
    if (n == 0) return true;
    auto written = socket_.write_all(
        {reinterpret_cast<const char*>(data), static_cast<std::size_t>(n)}, deadline);
    if (!written) return written.error();
  }
}

Result<bool> GrpcChannel::receive(Clock::time_point deadline) {
  char buffer[65536];
  auto n = socket_.read_some(buffer, sizeof(buffer), deadline);
  if (!n) return n.error();
  if (*n == 0) return false;
  const ssize_t used = api_->mem_recv(session_, reinterpret_cast<const std::uint8_t*>(buffer), *n);
  if (used < 0) {
    return failure(std::string("an HTTP/2 answer of etcd's gRPC API (") +
                   api_->strerror(int(used)) + "): is it etcd?");
  }
  return true;
}

Result<HttpAnswer> GrpcChannel::unary(const std::string& path, const nlohmann::json& request,
                                      Clock::time_point deadline) {
  const GrpcMethod* method = grpc_method(path);
  if (method == nullptr) return invalid("etcd gRPC", path, "a call the launcher makes");
  auto message = to_protobuf(*method, request);
  if (!message) return message.error();
  call_ = Call{};
  // gRPC's frame: uncompressed, the length (big-endian), the message.
  const auto size = static_cast<std::uint32_t>(message->size());
  call_.request = {'\0', char(size >> 24), char(size >> 16), char(size >> 8), char(size)};
  call_.request += *message;
  const std::string authority = socket_.where;
  std::vector<h2::Header> headers = {header(":method", "POST"),
                                     header(":scheme", socket_.tls ? "https" : "http"),
                                     header(":path", method->path),
                                     header(":authority", authority),
                                     header("content-type", "application/grpc"),
                                     header("te", "trailers")};
  if (!token_.empty()) headers.push_back(header("token", token_));
  h2::DataProvider body{};
  body.source.ptr = &call_;
  body.read_callback = read_request;
  h2::Session* session = session_;
  call_.stream =
      api_->submit_request(session, nullptr, headers.data(), headers.size(), &body, nullptr);
  if (call_.stream < 0) {
    return failure(std::string("an HTTP/2 request (") + api_->strerror(call_.stream) + ")");
  }
  while (!call_.closed) {
    if (auto sent = flush(deadline); !sent) return sent.error();
    if (call_.closed) break;
    if (!api_->want_read(session) && !api_->want_write(session)) {
      // The peer sent GOAWAY, or what it sent was not HTTP/2 (nghttp2 then ends the session).
      return failure(
          "HTTP/2 to go on (the session ended: the peer closed it, or does not speak "
          "HTTP/2; is it etcd's client port?)");
    }
    auto got = receive(deadline);
    if (!got) return got.error();
    if (!*got) return failure("an answer in time");
  }
  if (call_.reset_code != 0) {
    return failure("an answer (the stream was reset, HTTP/2 error " +
                   std::to_string(call_.reset_code) + ")");
  }
  HttpAnswer answer;
  if (call_.grpc_status.empty()) {
    return failure("a gRPC answer (HTTP " + call_.http_status + ", no grpc-status: is it etcd?)");
  }
  const int code = std::atoi(call_.grpc_status.c_str());
  if (code != 0) {
    const std::string said = percent_decoded(call_.grpc_message);
    // As the gateway answers a refusal: the session goes by gRPC's code (another member, a
    // new token, or the refusal named).
    answer.status = 400;
    answer.body = nlohmann::json{{"error", said}, {"code", code}, {"message", said}}.dump();
    return answer;
  }
  if (call_.answer.size() < 5) return failure("a gRPC message in the answer");
  const std::uint32_t length = (std::uint32_t(std::uint8_t(call_.answer[1])) << 24) |
                               (std::uint32_t(std::uint8_t(call_.answer[2])) << 16) |
                               (std::uint32_t(std::uint8_t(call_.answer[3])) << 8) |
                               std::uint32_t(std::uint8_t(call_.answer[4]));
  if (call_.answer[0] != 0 || call_.answer.size() < 5 + std::size_t(length)) {
    return failure("an uncompressed, whole gRPC message in the answer");
  }
  auto parsed = from_protobuf(*method, std::string_view(call_.answer).substr(5, length));
  if (!parsed) return parsed.error();
  answer.status = 200;
  answer.body = parsed->dump();
  return answer;
}

}  // namespace aml::etcd
