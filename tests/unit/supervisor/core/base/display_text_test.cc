// The one escaping function (supervisor/core/base/display_text.h): every Unicode general
// category, the invisible and steering characters named one by one, invalid UTF-8, the
// sinks, and the byte cap.
#include "supervisor/core/base/display_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace vigil {
namespace {

std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

struct CategoryCase {
  const char* category;
  char32_t cp;
  bool escaped;
};

// One or more code points of every general category (Unicode 14), with the verdict.
const std::vector<CategoryCase> kCategories = {
    {"Lu", U'A', false},        {"Lu", 0x0391, false},      {"Ll", U'z', false},
    {"Ll", 0x00e9, false},      {"Lt", 0x01c5, false},      {"Lm", 0x02b0, false},
    {"Lo", 0x4e2d, false},      {"Lo", 0x05d0, false},      {"Mn", 0x0301, false},
    {"Mc", 0x0903, false},      {"Me", 0x20dd, false},      {"Nd", U'7', false},
    {"Nd", 0x0663, false},      {"Nl", 0x2160, false},      {"No", 0x00b2, false},
    {"Pc", U'_', false},        {"Pd", U'-', false},        {"Ps", U'(', false},
    {"Pe", U')', false},        {"Pi", 0x00ab, false},      {"Pf", 0x00bb, false},
    {"Po", U'!', false},        {"Sm", U'+', false},        {"Sc", U'$', false},
    {"Sk", U'^', false},        {"So", 0x00a9, false},      {"So", 0x1f600, false},
    {"Zs", U' ', false},        {"Zs", 0x00a0, true},       {"Zs", 0x2003, true},
    {"Zs", 0x3000, true},       {"Zl", 0x2028, true},       {"Zp", 0x2029, true},
    {"Cc", 0x0000, true},       {"Cc", 0x001b, true},       {"Cc", 0x007f, true},
    {"Cc", 0x009b, true},       {"Cf", 0x00ad, true},       {"Cf", 0x0600, true},
    {"Cf", 0x061c, true},       {"Cf", 0x180e, true},       {"Cf", 0x200b, true},
    {"Cf", 0x200c, true},       {"Cf", 0x200d, true},       {"Cf", 0x200e, true},
    {"Cf", 0x202e, true},       {"Cf", 0x2060, true},       {"Cf", 0x2061, true},
    {"Cf", 0x2064, true},       {"Cf", 0x2066, true},       {"Cf", 0xfeff, true},
    {"Cf", 0xfff9, true},       {"Cf", 0xe0001, true},      {"Cf", 0xe0041, true},
    {"Cf", 0xe007f, true},      {"Co", 0xe000, true},       {"Co", 0x10fffd, true},
    {"Cn", 0x0378, true},       {"Cn", 0x2065, true},       {"Cn", 0xe0000, true},
    {"Cn", 0xfffe, true},
    // Surrogates are not characters: their UTF-8 form is invalid, escaped byte by byte.
    {"Cs", 0xd800, true},       {"Cs", 0xdfff, true},
    // Default-ignorable though not Cf/Cn: variation selectors, fillers, CGJ.
    {"Mn/VS", 0xfe0f, true},    {"Mn/VS", 0xe0100, true},   {"Mn/VS", 0xe01ef, true},
    {"Mn/CGJ", 0x034f, true},   {"Mn/FVS", 0x180b, true},   {"Lo/filler", 0x3164, true},
    {"Lo/filler", 0x115f, true}, {"Lo/filler", 0xffa0, true}, {"So/blank", 0x2800, true},
};

TEST(DisplayTextTest, EveryGeneralCategory) {
  // The table names each of Unicode's 30 general categories at least once.
  std::set<std::string> named;
  for (const auto& c : kCategories) named.insert(std::string(c.category).substr(0, 2));
  for (const char* gc : {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                         "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                         "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"}) {
    EXPECT_EQ(named.count(gc), 1U) << "no case of general category " << gc;
  }
  for (const auto& c : kCategories) {
    const std::string in = utf8(c.cp);
    const std::string out = escape_text(in);
    EXPECT_EQ(is_escaped_code_point(c.cp), c.escaped) << c.category << " U+" << std::hex << static_cast<std::uint32_t>(c.cp);
    if (c.escaped) {
      EXPECT_NE(out, in) << c.category;
      EXPECT_EQ(out[0], '\\') << c.category;
      for (const char ch : out)
        EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << c.category << ": escaped form is ASCII";
    } else {
      EXPECT_EQ(out, in) << c.category;
    }
  }
}

TEST(DisplayTextTest, Forms) {
  struct E {
    std::string in, out;
  };
  for (const E& e : std::vector<E>{
           {"plain /w/x.txt", "plain /w/x.txt"},
           {"new\nline", "new\\x0aline"},
           {"\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"},
           {"back\\slash", "back\\\\slash"},
           {"bad\xff\xfe", "bad\\xff\\xfe"},
           {"\xc0\xaf", "\\xc0\\xaf"},            // overlong '/'
           {"\xed\xa0\x80", "\\xed\\xa0\\x80"},   // surrogate
           {"cut\xe2\x80", "cut\\xe2\\x80"},      // truncated sequence
           {"csi\xc2\x9b", "csi\\u{009b}"},
           {"zw" + utf8(0x200b) + "sp", "zw\\u{200b}sp"},
           {"tag" + utf8(0xe0053), "tag\\u{e0053}"},
           {"pua" + utf8(0x10fffd), "pua\\u{10fffd}"},
           {"caf\xc3\xa9", "caf\xc3\xa9"},
           {std::string("nul\0x", 5), "nul\\x00x"},
       }) {
    EXPECT_EQ(escape_text(e.in), e.out) << e.out;
  }
}

// Every code point, one by one: the output is either the input itself, or pure ASCII
// with no control in it; and nothing that the table escapes ever passes.
TEST(DisplayTextTest, EveryCodePointIsTextOrAsciiEscape) {
  for (char32_t cp = 0; cp <= 0x10ffff; ++cp) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const std::string in = utf8(cp);
    const std::string out = escape_text(in);
    if (cp == U'\\') continue;
    if (!is_escaped_code_point(cp)) {
      ASSERT_EQ(out, in) << std::hex << static_cast<std::uint32_t>(cp);
      continue;
    }
    for (const char ch : out) ASSERT_TRUE(ch >= 0x20 && ch < 0x7f) << std::hex << static_cast<std::uint32_t>(cp);
  }
}

TEST(DisplayTextTest, HiddenInstructionIsVisible) {
  // "SYSTEM" spelt in tag characters: invisible in a transcript, read by a model.
  std::string hidden;
  for (const char c : std::string("SYSTEM")) hidden += utf8(0xe0000 + static_cast<unsigned char>(c));
  const std::string out = escape_text("/usr/lib/x" + hidden, TextSink::kAnnotation);
  EXPECT_EQ(out, "/usr/lib/x\\u{e0053}\\u{e0059}\\u{e0053}\\u{e0054}\\u{e0045}\\u{e004d}");
}

TEST(DisplayTextTest, Sinks) {
  EXPECT_EQ(escape_text("a<b>&\"'", TextSink::kTerminal), "a<b>&\"'");
  EXPECT_EQ(escape_text("a<b>&\"'", TextSink::kAnnotation), "a\\x3cb>&\"'");
  EXPECT_EQ(escape_text("a<b>&\"'", TextSink::kHtml), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(escape_text("x\n<img>", TextSink::kHtml), "x\\x0a&lt;img&gt;");
}

TEST(DisplayTextTest, ByteCapCutsBetweenPiecesWithMarker) {
  const std::string in(1000, 'a');
  const std::string out = escape_text(in, TextSink::kTerminal, 100);
  EXPECT_LE(out.size(), 100U);
  EXPECT_NE(out.find(" [cut: "), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 12), " more bytes]");
  // Fits: unchanged, no marker.
  EXPECT_EQ(escape_text("short", TextSink::kTerminal, 100), "short");
  // Exactly at the cap: no marker.
  EXPECT_EQ(escape_text(std::string(100, 'b'), TextSink::kTerminal, 100), std::string(100, 'b'));
  // Never inside an escape or a UTF-8 sequence.
  std::string hostile;
  for (int i = 0; i < 200; ++i) hostile += utf8(0xe0041) + "\xc3\xa9";
  for (std::size_t cap = 40; cap < 140; ++cap) {
    const std::string o = escape_text(hostile, TextSink::kAnnotation, cap);
    ASSERT_LE(o.size(), cap);
    const std::string head = o.substr(0, o.find(" [cut: "));
    // The kept part ends after a whole piece: "}" of an escape or the é.
    ASSERT_TRUE(head.back() == '}' || head.back() == '\xa9') << cap << ": " << head;
  }
}

}  // namespace
}  // namespace vigil
