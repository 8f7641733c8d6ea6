// JsonWriter (mechanics/json_output.hpp): every JSON report and every line of the worker's
// stream is written by it. The exact bytes of finish() and finish_on_one_line(): layout,
// string escapes, number forms; and that what it writes reads back as the same values.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/exact_decimal.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu::testing {
namespace {

rapidjson::Document parsed(const std::string& text) {
  rapidjson::Document document;
  document.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  EXPECT_FALSE(document.HasParseError()) << "not JSON: " << text;
  return document;
}

// The document with one member "v" written by `write`, as finish() returns it.
template <typename Write>
std::string document_with(Write write) {
  JsonWriter json("t", 1);
  json.key("v");
  write(json);
  return json.finish();
}

// Just the text of member "v" as written.
template <typename Write>
std::string written(Write write) {
  const std::string document = document_with(write);
  const std::string prefix = "{\n  \"schema\": \"t\",\n  \"schema_version\": 1,\n  \"v\": ";
  EXPECT_EQ(document.compare(0, prefix.size(), prefix), 0) << document;
  EXPECT_EQ(document.substr(document.size() - 3), "\n}\n") << document;
  return document.substr(prefix.size(), document.size() - prefix.size() - 3);
}

TEST(JsonWriter, StartsEveryDocumentWithItsSchema) {
  JsonWriter json("iteragpu.measurement", 7);
  EXPECT_EQ(json.finish(), "{\n  \"schema\": \"iteragpu.measurement\",\n  \"schema_version\": 7\n}\n");
  JsonWriter line("iteragpu.measurement", 7);
  EXPECT_EQ(line.finish_on_one_line(), "{\"schema\": \"iteragpu.measurement\",\"schema_version\": 7}\n");
}

TEST(JsonWriter, NestsObjectsAndArraysWithTwoSpaceIndentation) {
  const auto fill = [](JsonWriter& json) {
    json.key("o").begin_object()
        .key("a").begin_array()
            .begin_object().key("k").value("v").end_object()
            .begin_array().end_array()
            .begin_object().end_object()
            .begin_array().value(1).begin_array().value(2).end_array().end_array()
        .end_array()
        .key("empty").begin_object().end_object()
      .end_object()
      .key("last").value(false);
  };
  JsonWriter pretty("iteragpu.test", 3);
  fill(pretty);
  const std::string document = pretty.finish();
  EXPECT_EQ(document,
            "{\n"
            "  \"schema\": \"iteragpu.test\",\n"
            "  \"schema_version\": 3,\n"
            "  \"o\": {\n"
            "    \"a\": [\n"
            "      {\n"
            "        \"k\": \"v\"\n"
            "      },\n"
            "      [],\n"
            "      {},\n"
            "      [\n"
            "        1,\n"
            "        [\n"
            "          2\n"
            "        ]\n"
            "      ]\n"
            "    ],\n"
            "    \"empty\": {}\n"
            "  },\n"
            "  \"last\": false\n"
            "}\n");
  JsonWriter one_line("iteragpu.test", 3);
  fill(one_line);
  const std::string line = one_line.finish_on_one_line();
  EXPECT_EQ(line,
            "{\"schema\": \"iteragpu.test\",\"schema_version\": 3,\"o\": {\"a\": [{\"k\": \"v\"},[],{},"
            "[1,[2]]],\"empty\": {}},\"last\": false}\n");
  EXPECT_TRUE(parsed(document) == parsed(line));  // the same document
}

TEST(JsonWriter, EscapesEveryControlCharacter) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  EXPECT_EQ(written([&](JsonWriter& json) { json.value(controls); }),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000B\\f\\r\\u000E"
            "\\u000F\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001A"
            "\\u001B\\u001C\\u001D\\u001E\\u001F\"");
  // The escaped text reads back as the same 32 bytes (NUL included: the length is kept).
  const rapidjson::Document back = parsed(document_with([&](JsonWriter& json) { json.value(controls); }));
  EXPECT_EQ(std::string(back["v"].GetString(), back["v"].GetStringLength()), controls);
}

TEST(JsonWriter, EscapesQuotesAndBackslashesAndKeepsUtf8AsIs) {
  // DEL, a C1 control (U+0085), é, €, a 4-byte character and U+2028 are valid in JSON text.
  const std::string text = "\"\\/\x7f\xc2\x85\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xe2\x80\xa8";
  EXPECT_EQ(written([&](JsonWriter& json) { json.value(text); }),
            "\"\\\"\\\\/\x7f\xc2\x85\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xe2\x80\xa8\"");
  const rapidjson::Document back = parsed(document_with([&](JsonWriter& json) { json.value(text); }));
  EXPECT_EQ(std::string(back["v"].GetString()), text);
}

TEST(JsonWriter, EscapesKeysAndTheSchemaLikeValues) {
  JsonWriter json("a\"b\n", 1);
  json.key("k\"\\\t\x01").value("");
  EXPECT_EQ(json.finish(),
            "{\n  \"schema\": \"a\\\"b\\n\",\n  \"schema_version\": 1,\n  \"k\\\"\\\\\\t\\u0001\": \"\"\n}\n");
}

TEST(JsonWriter, WritesIntegersAtTheirExtremesExactly) {
  EXPECT_EQ(written([](JsonWriter& json) { json.value(0); }), "0");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(INT_MIN); }), "-2147483648");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(INT_MAX); }), "2147483647");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::numeric_limits<std::int64_t>::min()); }),
            "-9223372036854775808");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::numeric_limits<std::int64_t>::max()); }),
            "9223372036854775807");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::int64_t{-1}); }), "-1");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::numeric_limits<std::uint64_t>::max()); }),
            "18446744073709551615");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::uint64_t{0}); }), "0");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::size_t{1} << 63); }), "9223372036854775808");
  // 2^53 + 1: no double can hold it, the integer forms keep it.
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::int64_t{9007199254740993}); }), "9007199254740993");
  const rapidjson::Document back = parsed(document_with([](JsonWriter& json) {
    json.value(std::numeric_limits<std::uint64_t>::max());
  }));
  EXPECT_EQ(back["v"].GetUint64(), std::numeric_limits<std::uint64_t>::max());
}

TEST(JsonWriter, WritesDoublesInTheirShortestExactForm) {
  struct Case {
    double value;
    const char* text;
  } cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {-1.5, "-1.5"},
      {0.1, "0.1"},
      {1.0 / 3.0, "0.3333333333333333"},
      {123456.789, "123456.789"},
      {9007199254740992.0, "9007199254740992.0"},
      {1e17, "100000000000000000.0"},
      {1e18, "1e18"},  // RapidJSON's "1000000000000000000.0" has more digits than a reader takes
      {-1.2345e19, "-1.2345e19"},
      {1e20, "1e20"},
      {123456789012345680000.0, "1.2345678901234568e20"},
      {1e21, "1e21"},
      {1.5e300, "1.5e300"},
      {1e-6, "0.000001"},
      {1e-7, "1e-7"},
      {2.5e-10, "2.5e-10"},
      {DBL_MAX, "1.7976931348623157e308"},
      {-DBL_MAX, "-1.7976931348623157e308"},
      {DBL_MIN, "2.2250738585072014e-308"},
      {std::numeric_limits<double>::denorm_min(), "5e-324"},
  };
  for (const Case& c : cases) {
    const std::string document = document_with([&](JsonWriter& json) { json.value(c.value); });
    EXPECT_EQ(written([&](JsonWriter& json) { json.value(c.value); }), c.text);
    // Read back, it is the very same double (the sign of zero included).
    const double back = parsed(document)["v"].GetDouble();
    EXPECT_EQ(std::memcmp(&back, &c.value, sizeof back), 0) << c.text << " read back as " << back;
    // And the bounded reader every measurement file goes through takes it.
    rapidjson::Document bounded;
    EXPECT_EQ(parse_json(document, bounded), "") << c.text;
  }
}

TEST(JsonWriter, WritesNullOptionalsListsAndExactDecimals) {
  EXPECT_EQ(written([](JsonWriter& json) { json.null(); }), "null");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(true); }), "true");
  EXPECT_EQ(written([](JsonWriter& json) { json.value("text"); }), "\"text\"");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::string()); }), "\"\"");
  EXPECT_EQ(written([](JsonWriter& json) { json.text_or_null(""); }), "null");
  EXPECT_EQ(written([](JsonWriter& json) { json.text_or_null(" "); }), "\" \"");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::optional<std::int64_t>()); }), "null");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::optional<std::int64_t>(-5)); }), "-5");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::optional<double>()); }), "null");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::optional<double>(2.5)); }), "2.5");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::optional<std::string>("")); }), "\"\"");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::vector<std::string>()); }), "[]");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(std::vector<std::string>{"a", "b\n"}); }),
            "[\n    \"a\",\n    \"b\\n\"\n  ]");
  // Exact values are strings: no reader rounds them through a double.
  EXPECT_EQ(written([](JsonWriter& json) { json.value(ExactDecimal::parse("13.03851604461669921875")); }),
            "\"13.03851604461669921875\"");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(ExactDecimal::parse("-0.250")); }), "\"-0.25\"");
  EXPECT_EQ(written([](JsonWriter& json) { json.value(ExactDecimal::parse("123456789012345678901234567890")); }),
            "\"123456789012345678901234567890\"");
}

// Only layout line breaks are taken out: escaped ones and spaces inside strings stay.
TEST(JsonWriter, OneLineKeepsEverySpaceInsideStrings) {
  JsonWriter json("t", 1);
  json.key("s").value(std::string("a\n   b  \r\n  c"))
      .key("list").value(std::vector<std::string>{"  x", "y  "})
      .key("n").begin_object().key(" spaced key ").value(std::int64_t{-1}).end_object();
  const std::string line = json.finish_on_one_line();
  EXPECT_EQ(line,
            "{\"schema\": \"t\",\"schema_version\": 1,\"s\": \"a\\n   b  \\r\\n  c\",\"list\": [\"  x\",\"y  \"],"
            "\"n\": {\" spaced key \": -1}}\n");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const rapidjson::Document back = parsed(line);
  EXPECT_EQ(std::string(back["s"].GetString()), "a\n   b  \r\n  c");
  EXPECT_EQ(back["n"][" spaced key "].GetInt64(), -1);
}

}  // namespace
}  // namespace iteragpu::testing
