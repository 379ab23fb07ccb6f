// A protobuf message's fields, for the JSON gateway's spelling of it (DESIGN §5): enough of
// protobuf for etcd's unary calls, with no generated code. protobuf_json.cpp turns the JSON
// into the message's bytes and back by these tables; etcd_protobuf.cpp holds etcd's.
#pragma once

#include <aml/error.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace aml::etcd {

enum class FieldType { bytes, text, int64, uint64, boolean, enumeration, message };

struct MessageSchema;

struct FieldSchema {
  int number;
  std::string_view name;  // the gateway's JSON name (rpc.proto's own)
  FieldType type;
  bool repeated = false;
  const MessageSchema& (*message)() = nullptr;    // FieldType::message
  std::vector<std::string_view> enum_names = {};  // FieldType::enumeration, by number
};

struct MessageSchema {
  std::string_view name;
  std::vector<FieldSchema> fields;
};

// The message's bytes from the gateway's JSON; an error names a field the message lacks or a
// value of the wrong kind.
Result<std::string> encode_message(const MessageSchema& schema, const nlohmann::json& value);
// The gateway's JSON from the message's bytes (64-bit numbers as strings, bytes in base64,
// unknown fields skipped); an error where the bytes are not the message.
Result<nlohmann::json> decode_message(const MessageSchema& schema, std::string_view bytes);

}  // namespace aml::etcd
