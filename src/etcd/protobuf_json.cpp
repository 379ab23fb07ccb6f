#include <cstdint>

#include "etcd/base64.hpp"
#include "etcd/protobuf_schema.hpp"

namespace aml::etcd {

using nlohmann::json;

namespace {

using T = FieldType;

// --- the wire format: varints, and length-delimited fields.
constexpr int kVarint = 0, kFixed64 = 1, kDelimited = 2, kFixed32 = 5;

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_tag(std::string& out, int number, int wire) {
  put_varint(out, (static_cast<std::uint64_t>(number) << 3) | static_cast<std::uint64_t>(wire));
}

bool read_varint(std::string_view& in, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

Result<std::string> encode(const MessageSchema& schema, const json& value);

// One value of a field (a repeated field's element).
Result<bool> encode_value(std::string& out, const MessageSchema& schema, const FieldSchema& field,
                          const json& value) {
  auto wrong = [&](const char* expected) {
    return invalid("etcd gRPC request", std::string(schema.name) + "." + std::string(field.name),
                   expected);
  };
  switch (field.type) {
    case T::bytes:
    case T::text: {
      if (!value.is_string()) return wrong("a string");
      std::string raw = value.get<std::string>();
      if (field.type == T::bytes) {
        auto decoded = from_base64(raw);
        if (!decoded) return wrong("base64");
        raw = std::move(*decoded);
      }
      put_tag(out, field.number, kDelimited);
      put_varint(out, raw.size());
      out += raw;
      return true;
    }
    case T::int64:
    case T::uint64: {
      std::uint64_t number = 0;
      if (value.is_string()) {
        const std::string text = value.get<std::string>();
        number = field.type == T::int64 ? static_cast<std::uint64_t>(std::stoll(text))
                                        : std::stoull(text);
      } else if (value.is_number_integer()) {
        number = static_cast<std::uint64_t>(value.get<std::int64_t>());
      } else {
        return wrong("a number");
      }
      put_tag(out, field.number, kVarint);
      put_varint(out, number);
      return true;
    }
    case T::boolean:
      if (!value.is_boolean()) return wrong("true or false");
      put_tag(out, field.number, kVarint);
      put_varint(out, value.get<bool>() ? 1 : 0);
      return true;
    case T::enumeration: {
      std::uint64_t number = field.enum_names.size();
      if (value.is_number_integer()) number = value.get<std::uint64_t>();
      for (std::size_t i = 0; value.is_string() && i < field.enum_names.size(); ++i) {
        if (field.enum_names[i] == value.get<std::string>()) number = i;
      }
      if (number >= field.enum_names.size()) return wrong("one of the enum's names");
      put_tag(out, field.number, kVarint);
      put_varint(out, number);
      return true;
    }
    case T::message: {
      auto inner = encode(field.message(), value);
      if (!inner) return inner.error();
      put_tag(out, field.number, kDelimited);
      put_varint(out, inner->size());
      out += *inner;
      return true;
    }
  }
  return wrong("a known type");
}

Result<std::string> encode(const MessageSchema& schema, const json& value) {
  if (!value.is_object())
    return invalid("etcd gRPC request", std::string(schema.name), "an object");
  std::string out;
  for (const auto& [name, item] : value.items()) {
    const FieldSchema* field = nullptr;
    for (const FieldSchema& f : schema.fields) {
      if (f.name == name) field = &f;
    }
    if (field == nullptr) {
      return invalid("etcd gRPC request", std::string(schema.name) + "." + name,
                     "a field the message has");
    }
    if (field->repeated) {
      if (!item.is_array()) {
        return invalid("etcd gRPC request", std::string(schema.name) + "." + name, "an array");
      }
      for (const json& element : item) {
        if (auto done = encode_value(out, schema, *field, element); !done) return done.error();
      }
    } else if (auto done = encode_value(out, schema, *field, item); !done) {
      return done.error();
    }
  }
  return out;
}

Result<json> decode(const MessageSchema& schema, std::string_view in, int depth) {
  auto broken = [&]() {
    return invalid("etcd gRPC answer", std::string(schema.name), "a well-formed protobuf message");
  };
  if (depth > 16) return broken();
  json out = json::object();
  while (!in.empty()) {
    std::uint64_t tag = 0;
    if (!read_varint(in, tag)) return broken();
    const int number = static_cast<int>(tag >> 3);
    const int wire = static_cast<int>(tag & 7);
    std::uint64_t number_value = 0;
    std::string_view bytes;
    if (wire == kVarint) {
      if (!read_varint(in, number_value)) return broken();
    } else if (wire == kDelimited) {
      std::uint64_t size = 0;
      if (!read_varint(in, size) || size > in.size()) return broken();
      bytes = in.substr(0, size);
      in.remove_prefix(size);
    } else if (wire == kFixed64 || wire == kFixed32) {
      const std::size_t size = wire == kFixed64 ? 8 : 4;
      if (in.size() < size) return broken();
      in.remove_prefix(size);
      continue;  // no field of these messages is fixed-width
    } else {
      return broken();
    }
    const FieldSchema* field = nullptr;
    for (const FieldSchema& f : schema.fields) {
      if (f.number == number) field = &f;
    }
    if (field == nullptr) continue;  // a newer etcd's field
    const bool varint_type = field->type == T::int64 || field->type == T::uint64 ||
                             field->type == T::boolean || field->type == T::enumeration;
    if (varint_type != (wire == kVarint)) return broken();
    json value;
    switch (field->type) {
      case T::bytes:
        value = to_base64(bytes);
        break;
      case T::text:
        value = std::string(bytes);
        break;
      case T::int64:
        value = std::to_string(static_cast<std::int64_t>(number_value));
        break;
      case T::uint64:
        value = std::to_string(number_value);
        break;
      case T::boolean:
        value = number_value != 0;
        break;
      case T::enumeration:
        value = number_value < field->enum_names.size()
                    ? json(std::string(field->enum_names[number_value]))
                    : json(number_value);
        break;
      case T::message: {
        auto inner = decode(field->message(), bytes, depth + 1);
        if (!inner) return inner.error();
        value = std::move(*inner);
        break;
      }
    }
    const std::string key(field->name);
    if (field->repeated) {
      out[key].push_back(std::move(value));
    } else {
      out[key] = std::move(value);
    }
  }
  return out;
}

}  // namespace

Result<std::string> encode_message(const MessageSchema& schema, const json& value) {
  try {
    return encode(schema, value);
  } catch (const std::exception& e) {  // a number that is not one (std::stoll)
    return invalid("etcd gRPC request", std::string(schema.name),
                   std::string("numbers: ") + e.what());
  }
}

Result<json> decode_message(const MessageSchema& schema, std::string_view bytes) {
  return decode(schema, bytes, 0);
}

}  // namespace aml::etcd
