#include "estimate/safetensors_header.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "mechanics/json_input.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

// Every dtype huggingface/safetensors defines (Dtype::bitsize, safetensors 0.6/0.7).
struct DtypeBits {
  const char* name;
  unsigned bits;
};
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},        {"F4", 4},           {"F6_E2M3", 6},      {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8},      {"F8_E4M3", 8},      {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},         {"U16", 16},         {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},         {"F32", 32},         {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
};

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw InputFileError(path, reason);
}

// The offset of the first byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF refused), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (n - i < length || s[i + 1] < low || s[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string kind_of(const rapidjson::Value& value) {
  if (value.IsObject()) return "an object";
  if (value.IsArray()) return "an array";
  if (value.IsString()) return "a string";
  if (value.IsNumber()) return "a number";
  if (value.IsBool()) return "a boolean";
  return "null";
}

std::string list_text(const std::vector<std::uint64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string offsets_text(const SafetensorsTensor& t) { return list_text({t.begin, t.end}); }

// A JSON array of non-negative integers (each below 2^64); "" or the reason it is not.
std::string read_unsigned_array(const rapidjson::Value& value, const char* what,
                                std::vector<std::uint64_t>& out) {
  if (!value.IsArray()) return std::string(what) + " is " + kind_of(value) + ", not an array of integers";
  out.clear();
  out.reserve(value.Size());
  for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
    const rapidjson::Value& item = value[i];
    const std::string where = std::string(what) + " item " + std::to_string(i);
    if (item.IsUint64()) {
      out.push_back(item.GetUint64());
    } else if (item.IsInt64()) {
      return where + " is negative (" + std::to_string(item.GetInt64()) + ")";
    } else if (item.IsNumber()) {
      char number[32];
      std::snprintf(number, sizeof number, "%.17g", item.GetDouble());
      return where + " is not an integer below 2^64 (" + number + ")";
    } else {
      return where + " is " + kind_of(item) + ", not an integer";
    }
  }
  return "";
}

SafetensorsTensor read_tensor(const std::string& name, const rapidjson::Value& entry,
                              std::uint64_t data_bytes, const std::string& path) {
  const std::string label = "tensor " + quoted_tensor_name(name);
  if (!entry.IsObject())
    fail(path, label + " is " + kind_of(entry) + ", not an object with dtype, shape and data_offsets");
  SafetensorsTensor tensor;
  tensor.name = name;
  const auto member = [&](const char* key) -> const rapidjson::Value& {
    const auto found = entry.FindMember(key);
    if (found == entry.MemberEnd()) fail(path, label + " has no \"" + key + "\"");
    return found->value;
  };
  const rapidjson::Value& dtype = member("dtype");
  if (!dtype.IsString()) fail(path, label + ": dtype is " + kind_of(dtype) + ", not a string");
  tensor.dtype.assign(dtype.GetString(), dtype.GetStringLength());
  tensor.bits = safetensors_dtype_bits(tensor.dtype);
  if (tensor.bits == 0)
    fail(path, label + ": unknown dtype " + quoted_tensor_name(tensor.dtype) + "; accepted: " +
                   safetensors_dtypes_accepted());

  std::string problem = read_unsigned_array(member("shape"), "shape", tensor.shape);
  if (!problem.empty()) fail(path, label + ": " + problem);
  std::vector<std::uint64_t> offsets;
  problem = read_unsigned_array(member("data_offsets"), "data_offsets", offsets);
  if (problem.empty() && offsets.size() != 2)
    problem = "data_offsets has " + std::to_string(offsets.size()) + " items, not 2 ([begin, end])";
  if (!problem.empty()) fail(path, label + ": " + problem);
  tensor.begin = offsets[0];
  tensor.end = offsets[1];
  if (tensor.end < tensor.begin)
    fail(path, label + ": data_offsets " + offsets_text(tensor) + " end before they begin");
  if (tensor.end > data_bytes)
    fail(path, label + ": data_offsets " + offsets_text(tensor) + " reach past the end of the data (" +
                   std::to_string(data_bytes) + " bytes after the header)");

  // elements × bits, overflow-checked: a zero dimension makes the tensor empty whatever the
  // others say, as the reference computes it.
  const bool empty = std::find(tensor.shape.begin(), tensor.shape.end(), 0) != tensor.shape.end();
  std::uint64_t elements = empty ? 0 : 1, bits = 0;
  bool overflow = false;
  for (std::uint64_t dimension : tensor.shape)
    if (!empty) overflow = overflow || __builtin_mul_overflow(elements, dimension, &elements);
  overflow = overflow || __builtin_mul_overflow(elements, std::uint64_t{tensor.bits}, &bits);
  const std::string shape_text = "shape " + list_text(tensor.shape) + " of " + tensor.dtype;
  if (overflow) fail(path, label + ": " + shape_text + " has more bits than fit in 64 bits");
  if (bits % 8 != 0)
    fail(path, label + ": " + shape_text + " (" + std::to_string(tensor.bits) +
                   " bits each) is not a whole number of bytes");
  tensor.elements = elements;
  if (bits / 8 != tensor.bytes())
    fail(path, label + ": " + shape_text + " is " + std::to_string(bits / 8) + " bytes, but data_offsets " +
                   offsets_text(tensor) + " hold " + std::to_string(tensor.bytes()));
  return tensor;
}

void read_metadata(const rapidjson::Value& value, SafetensorsHeader& header, const std::string& path) {
  if (!value.IsObject()) fail(path, "__metadata__ is " + kind_of(value) + ", not an object of strings");
  for (const auto& item : value.GetObject()) {
    std::string key(item.name.GetString(), item.name.GetStringLength());
    if (!item.value.IsString())
      fail(path, "__metadata__ value of " + quoted_tensor_name(key) + " is " + kind_of(item.value) +
                     ", not a string");
    header.metadata.emplace_back(std::move(key),
                                 std::string(item.value.GetString(), item.value.GetStringLength()));
  }
}

}  // namespace

unsigned safetensors_dtype_bits(const std::string& dtype) {
  for (const auto& entry : kDtypes)
    if (dtype == entry.name) return entry.bits;
  return 0;
}

const std::string& safetensors_dtypes_accepted() {
  static const std::string text = [] {
    std::string joined;
    for (const auto& entry : kDtypes) joined += (joined.empty() ? "" : ", ") + std::string(entry.name);
    return joined;
  }();
  return text;
}

std::string quoted_tensor_name(const std::string& name) {
  return quoted_for_message(name, 200);  // tensor names run longer than the values of options
}

std::uint64_t safetensors_header_length(std::string_view first_eight, std::uint64_t file_size,
                                        const std::string& path) {
  if (file_size < kSafetensorsLengthBytes || first_eight.size() < kSafetensorsLengthBytes)
    fail(path, "is " + std::to_string(file_size) +
                   " bytes, shorter than the 8-byte header length that begins a safetensors file");
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(first_eight[i]);
  if (length > kSafetensorsMaxHeaderBytes)
    fail(path, "header length " + std::to_string(length) + " is above the safetensors limit of " +
                   std::to_string(kSafetensorsMaxHeaderBytes) + " bytes (not a safetensors file?)");
  if (length > file_size - kSafetensorsLengthBytes)
    fail(path, "header length " + std::to_string(length) + " reaches past the end of the file (" +
                   std::to_string(file_size) + " bytes)");
  return length;
}

SafetensorsHeader parse_safetensors_header(std::string_view text, std::uint64_t file_size,
                                           const std::string& path) {
  if (file_size < kSafetensorsLengthBytes || text.size() > file_size - kSafetensorsLengthBytes)
    fail(path, "header of " + std::to_string(text.size()) + " bytes does not fit in the file (" +
                   std::to_string(file_size) + " bytes)");
  SafetensorsHeader header;
  header.header_bytes = text.size();
  header.data_bytes = file_size - kSafetensorsLengthBytes - text.size();

  // A NUL would end RapidJSON's input early and hide what follows it; JSON has none.
  if (const void* nul = std::memchr(text.data(), '\0', text.size()))
    fail(path, "header has a NUL byte at offset " +
                   std::to_string(static_cast<const char*>(nul) - text.data()) + "; it is not JSON text");
  const std::size_t bad = first_invalid_utf8(text);
  if (bad != std::string_view::npos)
    fail(path, "header is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  rapidjson::Document document;
  const std::string problem = parse_json(std::string(text), document);
  if (!problem.empty()) fail(path, "header is " + problem);
  if (!document.IsObject()) fail(path, "header is " + kind_of(document) + ", not a JSON object");

  // Each name once: parse_json refuses a member named twice.
  header.tensors.reserve(document.MemberCount());
  for (const auto& member : document.GetObject()) {
    std::string name(member.name.GetString(), member.name.GetStringLength());
    if (name == "__metadata__") {
      read_metadata(member.value, header, path);
    } else {
      header.tensors.push_back(read_tensor(name, member.value, header.data_bytes, path));
    }
  }

  // The tensors must tile the data: sorted by offsets, each begins where the previous ended.
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
            });
  std::uint64_t covered = 0, reached = 0;
  const SafetensorsTensor* previous = nullptr;
  std::uint64_t first_gap = header.data_bytes;
  for (const auto& tensor : header.tensors) {
    if (previous != nullptr && tensor.begin < reached)
      fail(path, "tensors " + quoted_tensor_name(previous->name) + " " + offsets_text(*previous) + " and " +
                     quoted_tensor_name(tensor.name) + " " + offsets_text(tensor) + " overlap");
    if (tensor.begin > reached && first_gap == header.data_bytes) first_gap = reached;
    covered += tensor.bytes();
    reached = tensor.end;
    if (tensor.bytes() > 0 || previous == nullptr) previous = &tensor;
  }
  if (covered != header.data_bytes) {
    if (first_gap == header.data_bytes) first_gap = reached;
    fail(path, std::to_string(header.data_bytes - covered) +
                   " bytes of data are not covered by any tensor (the first at data offset " +
                   std::to_string(first_gap) + "); safetensors data must be exactly the tensors'");
  }
  return header;
}

SafetensorsHeader parse_safetensors_bytes(const std::uint8_t* bytes, std::size_t size,
                                          const std::string& path) {
  const std::string_view file(reinterpret_cast<const char*>(bytes), size);
  const std::uint64_t length = safetensors_header_length(file.substr(0, kSafetensorsLengthBytes), size, path);
  return parse_safetensors_header(file.substr(kSafetensorsLengthBytes, length), size, path);
}

SafetensorsHeader read_safetensors_header(const InputFile& file) {
  const std::string first_eight =
      file.size() < kSafetensorsLengthBytes ? std::string() : file.read_at(0, kSafetensorsLengthBytes);
  const std::uint64_t length = safetensors_header_length(first_eight, file.size(), file.path());
  const std::string text = file.read_at(kSafetensorsLengthBytes, static_cast<std::size_t>(length));
  return parse_safetensors_header(text, file.size(), file.path());
}

}  // namespace iteragpu
