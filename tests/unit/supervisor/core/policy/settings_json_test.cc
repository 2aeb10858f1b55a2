// The position-keeping settings JSON parser: exact "line L, column C" of syntax errors,
// duplicate keys refused with their JSON path, the nesting and size bounds, the offsets
// map, and the JSON path spelling of keys.
#include "supervisor/core/policy/settings_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

struct ErrorRow {
  std::string name;
  std::string text;
  std::string message;  // the whole expected message ("" = must parse)
};

void expect_rows(const std::vector<ErrorRow>& rows) {
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto got = parse_settings_json(r.text, "s.json");
    if (r.message.empty()) {
      EXPECT_TRUE(got.ok()) << got.error().message;
      continue;
    }
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
    EXPECT_EQ(got.error().message.find('\n'), std::string::npos) << "one line";
    // nlohmann's own wording after our prefix may change between versions; the prefix
    // (file, position) and the reason fragment are ours.
    EXPECT_EQ(got.error().message.substr(0, r.message.size()), r.message) << got.error().message;
  }
}

TEST(SettingsJsonTest, SyntaxErrorPositions) {
  expect_rows({
      // 1-based columns; the position is the offending byte.
      {"empty input", "",
       "s.json: line 1, column 1: syntax error while parsing value - unexpected end of input"},
      {"trailing comma in object", "{\"a\": 1,}",
       "s.json: line 1, column 9: syntax error while parsing object key"},
      {"trailing comma on line 3", "{\n  \"filesystem\": {\n    \"allowWrite\": [\"a\",]\n  }\n}",
       "s.json: line 3, column 24: syntax error while parsing value"},
      {"unterminated string at EOF", "{\"x\": \"abc",
       "s.json: line 1, column 11: syntax error while parsing value - invalid string: missing "
       "closing quote"},
      {"raw newline inside a string", "{\"x\": \"abc\n\"}",
       "s.json: line 1, column 11: syntax error while parsing value - invalid string: control "
       "character U+000A (LF)"},
      {"missing colon", "{\n\"a\" 1}",
       "s.json: line 2, column 5: syntax error while parsing object separator"},
      // nlohmann reports the last byte of the offending token (the closing quote of "b")
      {"missing comma", "{\"a\": 1\n \"b\": 2}",
       "s.json: line 2, column 4: syntax error while parsing object"},
      {"single quotes", "{'a': 1}",
       "s.json: line 1, column 2: syntax error while parsing object key"},
      {"comment (strict JSON)", "{\n// c\n}",
       "s.json: line 2, column 1: syntax error while parsing object key"},
      {"bare word", "{\"a\": yes}",
       "s.json: line 1, column 7: syntax error while parsing value - invalid literal"},
      {"trailing garbage", "{}\n\n  x",
       "s.json: line 3, column 3: syntax error while parsing value - invalid literal"},
      {"second document", "{} {}",
       "s.json: line 1, column 4: syntax error while parsing value - unexpected '{'; expected end "
       "of input"},
      {"unclosed object", "{\"a\": [1, 2]\n",
       "s.json: line 2, column 1: syntax error while parsing object"},
      {"CRLF counts as one line break", "{\r\n\"a\": 1,\r\n}",
       "s.json: line 3, column 1: syntax error while parsing object key"},
      // fine
      {"empty object", "{}", ""},
      {"whitespace around", " \n\t{ }\n\n", ""},
  });
}

TEST(SettingsJsonTest, DuplicateKeysRefusedWithPath) {
  expect_rows({
      {"top level", "{\"a\": 1, \"a\": 2}",
       "s.json: line 1, column 12: duplicate key a (a second value would silently replace the "
       "first)"},
      {"nested, on line 3",
       "{\"filesystem\": {\n  \"allowWrite\": [\"/a\"],\n  \"allowWrite\": [\"/b\"]}}",
       "s.json: line 3, column 14: duplicate key filesystem.allowWrite"},
      {"non-identifier key",
       "{\"network\": {\"deniedDomainReasons\": {\"a.com\": \"x\", \"a.com\": \"y\"}}}",
       "s.json: line 1, column 58: duplicate key network.deniedDomainReasons[\"a.com\"]"},
      {"inside an array element", "{\"l\": [{}, {\"p\": 1, \"p\": 2}]}",
       "s.json: line 1, column 23: duplicate key l[1].p"},
      {"same value twice still refused", "{\"a\": true, \"a\": true}",
       "s.json: line 1, column 15: duplicate key a"},
      // the same key in sibling objects is not a duplicate
      {"siblings", "{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"c\": [{\"k\": 1}, {\"k\": 2}]}", ""},
      // keys differing only in case are different keys
      {"case", "{\"a\": 1, \"A\": 2}", ""},
  });
}

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

TEST(SettingsJsonTest, NestingDepthLimit) {
  ASSERT_EQ(kMaxSettingsDepth, 32);
  expect_rows({
      {"32 arrays", nested_arrays(32), ""},
      {"33 arrays", nested_arrays(33), "s.json: line 1, column 33: nesting deeper than 32 levels"},
      {"10000 arrays", nested_arrays(10000),
       "s.json: line 1, column 33: nesting deeper than 32 levels"},
      {"objects count too", "{\"a\":" + nested_arrays(31) + "}", ""},
      {"objects count too (33)", "{\"a\":" + nested_arrays(32) + "}",
       "s.json: line 1, column 37: nesting deeper than 32 levels"},
  });
}

TEST(SettingsJsonTest, SizeLimit) {
  ASSERT_EQ(kMaxSettingsBytes, std::size_t{1} << 20);
  // Pad a valid document with whitespace to an exact size.
  auto padded = [](std::size_t size) {
    std::string s = "{}";
    s.resize(size, ' ');
    return s;
  };
  EXPECT_TRUE(parse_settings_json(padded(kMaxSettingsBytes), "s.json").ok());
  auto big = parse_settings_json(padded(kMaxSettingsBytes + 1), "s.json");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, Errc::kInvalidPolicy);
  EXPECT_EQ(big.error().message, "s.json: larger than 1048576 bytes; not a settings file");
  auto huge = parse_settings_json(std::string(3 << 20, '{'), "s.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("larger than 1048576 bytes"), std::string::npos);
}

// offsets[path] is just past the value's first token, so offset-1 is the token's last
// byte: the closing quote of a string, the bracket of a container, the last digit of a
// number (the lexer reads one byte past a number; that byte must not count).
TEST(SettingsJsonTest, OffsetsPointAtTheValue) {
  const std::string text =
      "{\n"
      "  \"n\": 12,\n"
      "  \"s\": \"ab\",\n"
      "  \"l\": [7, true, null, -3.5e2],\n"
      "  \"o\": {\"a.b\": 0}\n"
      "}";
  auto doc = parse_settings_json(text, "s.json");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  struct Row {
    std::string path;
    std::string at;  // line_column of offset-1
  };
  const std::vector<Row> rows = {
      {"", "line 1, column 1"},      {"n", "line 2, column 9"},
      {"s", "line 3, column 11"},    {"l", "line 4, column 8"},
      {"l[0]", "line 4, column 9"},  {"l[1]", "line 4, column 15"},
      {"l[2]", "line 4, column 21"}, {"l[3]", "line 4, column 29"},
      {"o", "line 5, column 8"},     {"o[\"a.b\"]", "line 5, column 16"},
  };
  EXPECT_EQ(doc->offsets.size(), rows.size());
  for (const auto& r : rows) {
    SCOPED_TRACE(r.path);
    auto it = doc->offsets.find(r.path);
    ASSERT_NE(it, doc->offsets.end());
    EXPECT_EQ(line_column(doc->text, it->second - 1), r.at);
  }
  // A number that ends the text has no lookahead byte.
  auto bare = parse_settings_json("42", "s.json");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->offsets.at(""), 2u);
}

TEST(SettingsJsonTest, LineColumnTable) {
  struct Row {
    std::string text;
    std::size_t offset;
    std::string want;
  };
  const std::vector<Row> rows = {
      {"", 0, "line 1, column 1"},
      {"abc", 0, "line 1, column 1"},
      {"abc", 2, "line 1, column 3"},
      {"abc", 3, "line 1, column 4"},
      {"abc", 99, "line 1, column 4"},  // clamped to the end
      {"a\nb", 1, "line 1, column 2"},  // the newline byte is on line 1
      {"a\nb", 2, "line 2, column 1"},
      {"\n\n\nx", 3, "line 4, column 1"},
      {"ab\ncd\nef", 7, "line 3, column 2"},
      {"\xc3\xa9x", 2, "line 1, column 3"},  // bytes, not characters
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.text + " @" + std::to_string(r.offset));
    EXPECT_EQ(line_column(r.text, r.offset), r.want);
  }
}

TEST(SettingsJsonTest, JsonPathKeyQuoting) {
  struct Row {
    std::string parent;
    std::string key;
    std::string want;
  };
  const std::vector<Row> rows = {
      {"", "network", "network"},
      {"network", "allowedDomains", "network.allowedDomains"},
      {"a.b", "c_d-e9", "a.b.c_d-e9"},
      {"x", "a.com", "x[\"a.com\"]"},
      {"", "a.com", "[\"a.com\"]"},
      {"x", "", "x[\"\"]"},
      {"x", "a b", "x[\"a b\"]"},
      {"x", "a\"b", "x[\"a\\\"b\"]"},
      {"x", "a\\b", "x[\"a\\\\b\"]"},
      {"x", "a\nb", "x[\"a\\nb\"]"},  // control bytes stay visible, on one line
      {"x", std::string("a\x01", 2), "x[\"a\\u0001\"]"},
      {"x", "*.github.com", "x[\"*.github.com\"]"},
      {"x", "[0]", "x[\"[0]\"]"},
      {"x", "caf\xc3\xa9", "x[\"caf\xc3\xa9\"]"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.parent + " + " + r.key);
    EXPECT_EQ(json_path_key(r.parent, r.key), r.want);
  }
  EXPECT_EQ(json_path_index("filesystem.denyRead", 2), "filesystem.denyRead[2]");
  EXPECT_EQ(json_path_index("", 0), "[0]");
  EXPECT_EQ(json_path_index("x[\"a.com\"]", 10), "x[\"a.com\"][10]");
}

TEST(SettingsJsonTest, ParsedValuesAndSourceInMessages) {
  auto doc = parse_settings_json("{\"a\": [1, \"x\"], \"b\": {\"c\": false}}", "s.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->root["a"][0], 1);
  EXPECT_EQ(doc->root["a"][1], "x");
  EXPECT_EQ(doc->root["b"]["c"], false);
  // The source string names the file verbatim.
  auto bad = parse_settings_json("{", "/home/u/.srt-settings.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("/home/u/.srt-settings.json: line 1, column 2: ", 0), 0u)
      << bad.error().message;
}

}  // namespace
}  // namespace vigil
