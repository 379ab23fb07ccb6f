// The gRPC channel declares libnghttp2's structs and constants itself (src/etcd/http2_abi.hpp,
// no header needed to build): here they are checked against nghttp2.h, member by member, and
// each function's type against the header's.
#include "etcd/http2_abi.hpp"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <type_traits>

namespace aml::etcd {
namespace {

#define AML_SAME_MEMBER(ours, theirs, our_member, their_member)                \
  static_assert(offsetof(ours, our_member) == offsetof(theirs, their_member)); \
  static_assert(sizeof(ours::our_member) == sizeof(theirs::their_member))

static_assert(sizeof(h2::FrameHead) == sizeof(nghttp2_frame_hd));
AML_SAME_MEMBER(h2::FrameHead, nghttp2_frame_hd, stream_id, stream_id);
static_assert(offsetof(nghttp2_headers, hd) == 0);
static_assert(sizeof(h2::Header) == sizeof(nghttp2_nv));
AML_SAME_MEMBER(h2::Header, nghttp2_nv, name, name);
AML_SAME_MEMBER(h2::Header, nghttp2_nv, value, value);
AML_SAME_MEMBER(h2::Header, nghttp2_nv, name_size, namelen);
AML_SAME_MEMBER(h2::Header, nghttp2_nv, value_size, valuelen);
AML_SAME_MEMBER(h2::Header, nghttp2_nv, flags, flags);
static_assert(sizeof(h2::Setting) == sizeof(nghttp2_settings_entry));
AML_SAME_MEMBER(h2::Setting, nghttp2_settings_entry, id, settings_id);
AML_SAME_MEMBER(h2::Setting, nghttp2_settings_entry, value, value);
static_assert(sizeof(h2::DataSource) == sizeof(nghttp2_data_source));
static_assert(sizeof(h2::DataProvider) == sizeof(nghttp2_data_provider));
AML_SAME_MEMBER(h2::DataProvider, nghttp2_data_provider, read_callback, read_callback);

static_assert(h2::kSettingsEnablePush == NGHTTP2_SETTINGS_ENABLE_PUSH);
static_assert(h2::kSettingsInitialWindowSize == NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE);
static_assert(h2::kFlagNone == NGHTTP2_FLAG_NONE);
static_assert(h2::kHeaderFlagNone == NGHTTP2_NV_FLAG_NONE);
static_assert(h2::kDataFlagEof == NGHTTP2_DATA_FLAG_EOF);
static_assert(h2::kErrorCallbackFailure == NGHTTP2_ERR_CALLBACK_FAILURE);

// Each function's return type and arity as the header declares it.
template <class Ours, class Theirs>
struct SameShape;
template <class R1, class... A1, class R2, class... A2>
struct SameShape<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool value = std::is_same_v<R1, R2> && sizeof...(A1) == sizeof...(A2);
};
#define AML_SAME_FUNCTION(member, function) \
  static_assert(SameShape<decltype(h2::Api::member), decltype(&::function)>::value, #function)

AML_SAME_FUNCTION(session_callbacks_new, nghttp2_session_callbacks_new);
AML_SAME_FUNCTION(session_callbacks_del, nghttp2_session_callbacks_del);
AML_SAME_FUNCTION(set_on_header_callback, nghttp2_session_callbacks_set_on_header_callback);
AML_SAME_FUNCTION(set_on_data_callback, nghttp2_session_callbacks_set_on_data_chunk_recv_callback);
AML_SAME_FUNCTION(set_on_stream_close_callback,
                  nghttp2_session_callbacks_set_on_stream_close_callback);
AML_SAME_FUNCTION(session_client_new, nghttp2_session_client_new);
AML_SAME_FUNCTION(session_del, nghttp2_session_del);
AML_SAME_FUNCTION(submit_settings, nghttp2_submit_settings);
AML_SAME_FUNCTION(set_local_window_size, nghttp2_session_set_local_window_size);
AML_SAME_FUNCTION(submit_request, nghttp2_submit_request);
AML_SAME_FUNCTION(mem_send, nghttp2_session_mem_send);
AML_SAME_FUNCTION(mem_recv, nghttp2_session_mem_recv);
AML_SAME_FUNCTION(want_read, nghttp2_session_want_read);
AML_SAME_FUNCTION(want_write, nghttp2_session_want_write);
AML_SAME_FUNCTION(strerror, nghttp2_strerror);
static_assert(SameShape<h2::OnHeader, nghttp2_on_header_callback>::value);
static_assert(SameShape<h2::OnData, nghttp2_on_data_chunk_recv_callback>::value);
static_assert(SameShape<h2::OnStreamClose, nghttp2_on_stream_close_callback>::value);
static_assert(SameShape<h2::ReadBody, nghttp2_data_source_read_callback>::value);

// The checks above are made when this file compiles; this says so in the test run.
TEST(Http2AbiTest, TheDeclarationsMatchNghttp2sHeader) {
  EXPECT_EQ(sizeof(h2::Header), sizeof(nghttp2_nv));
  EXPECT_EQ(offsetof(h2::FrameHead, stream_id), offsetof(nghttp2_frame_hd, stream_id));
}

}  // namespace
}  // namespace aml::etcd
