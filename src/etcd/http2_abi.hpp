// libnghttp2's C interface, the part the gRPC channel uses (grpc_channel.cpp), declared here
// so that no nghttp2 header is needed to build (the portable build sees none): its session is
// opaque, its structs are plain C, and their layout is checked against nghttp2.h by
// tests/unit/http2_abi_test.cpp. Stable since libnghttp2.so.14 (nghttp2 1.0).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace aml::etcd::h2 {

struct Session;    // nghttp2_session
struct Callbacks;  // nghttp2_session_callbacks

struct FrameHead {  // nghttp2_frame_hd: the first member of every nghttp2_frame
  std::size_t length;
  std::int32_t stream_id;
  std::uint8_t type;
  std::uint8_t flags;
  std::uint8_t reserved;
};

struct Header {  // nghttp2_nv
  std::uint8_t* name;
  std::uint8_t* value;
  std::size_t name_size;
  std::size_t value_size;
  std::uint8_t flags;
};

struct Setting {  // nghttp2_settings_entry
  std::int32_t id;
  std::uint32_t value;
};

union DataSource {  // nghttp2_data_source
  int fd;
  void* ptr;
};

using ReadBody = ssize_t (*)(Session*, std::int32_t stream, std::uint8_t* buffer, std::size_t size,
                             std::uint32_t* data_flags, DataSource* source, void* user);

struct DataProvider {  // nghttp2_data_provider
  DataSource source;
  ReadBody read_callback;
};

using OnHeader = int (*)(Session*, const FrameHead* frame, const std::uint8_t* name,
                         std::size_t name_size, const std::uint8_t* value, std::size_t value_size,
                         std::uint8_t flags, void* user);
using OnData = int (*)(Session*, std::uint8_t flags, std::int32_t stream, const std::uint8_t* data,
                       std::size_t size, void* user);
using OnStreamClose = int (*)(Session*, std::int32_t stream, std::uint32_t error_code, void* user);

inline constexpr std::int32_t kSettingsEnablePush = 0x02;
inline constexpr std::int32_t kSettingsInitialWindowSize = 0x04;
inline constexpr std::uint8_t kFlagNone = 0;
inline constexpr std::uint8_t kHeaderFlagNone = 0;
inline constexpr std::uint32_t kDataFlagEof = 0x01;
inline constexpr int kErrorCallbackFailure = -902;

// The functions, by their C signatures.
struct Api {
  int (*session_callbacks_new)(Callbacks**);
  void (*session_callbacks_del)(Callbacks*);
  void (*set_on_header_callback)(Callbacks*, OnHeader);
  void (*set_on_data_callback)(Callbacks*, OnData);
  void (*set_on_stream_close_callback)(Callbacks*, OnStreamClose);
  int (*session_client_new)(Session**, const Callbacks*, void* user);
  void (*session_del)(Session*);
  int (*submit_settings)(Session*, std::uint8_t flags, const Setting*, std::size_t count);
  int (*set_local_window_size)(Session*, std::uint8_t flags, std::int32_t stream,
                               std::int32_t size);
  std::int32_t (*submit_request)(Session*, const void* priority, const Header*, std::size_t count,
                                 const DataProvider*, void* stream_user);
  ssize_t (*mem_send)(Session*, const std::uint8_t** data);
  ssize_t (*mem_recv)(Session*, const std::uint8_t* in, std::size_t size);
  int (*want_read)(Session*);
  int (*want_write)(Session*);
  const char* (*strerror)(int);
};

}  // namespace aml::etcd::h2
