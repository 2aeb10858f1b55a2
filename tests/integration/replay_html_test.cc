// The HTML report in a real browser: `vigil replay --html` on the demo session (with a
// hostile path in it), rendered by headless Chromium to a PNG, which must be a real
// screenshot and must show the denial highlight colour (replay::kDenyColour, #b3261e).
//
// Skips, saying so, when /usr/bin/chromium is missing (CI installs the Debian package
// "chromium" in tools/bootstrap.sh so that it never skips there).
//
// The PNG is decoded here (zlib inflate + scanline filters, ~150 lines) so the test needs
// no image library.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {

// replay_test.cc
std::string write_demo_log(const std::string& path, bool hostile);

namespace {

constexpr const char* kChromium = "/usr/bin/chromium";
// replay::kDenyColour
constexpr std::uint8_t kDenyR = 0xb3, kDenyG = 0x26, kDenyB = 0x1e;

// ---- inflate (RFC 1951), after zlib's puff.c: canonical Huffman, decoded bit by bit ----

class Inflater {
 public:
  Inflater(const std::uint8_t* in, std::size_t len) : in_(in), len_(len) {}

  bool run(std::vector<std::uint8_t>* out) {
    out_ = out;
    int last = 0;
    do {
      last = static_cast<int>(bits(1));
      const int type = static_cast<int>(bits(2));
      if (err_) return false;
      if (type == 0) {
        if (!stored()) return false;
      } else if (type == 1) {
        if (!fixed()) return false;
      } else if (type == 2) {
        if (!dynamic()) return false;
      } else {
        return false;
      }
    } while (last == 0 && !err_);
    return !err_;
  }

 private:
  struct Huffman {
    std::uint16_t count[16] = {};
    std::uint16_t symbol[320] = {};
  };

  std::uint32_t bits(int n) {
    while (bitcnt_ < n) {
      if (pos_ >= len_) {
        err_ = true;
        return 0;
      }
      bitbuf_ |= static_cast<std::uint32_t>(in_[pos_++]) << bitcnt_;
      bitcnt_ += 8;
    }
    const std::uint32_t v = bitbuf_ & ((1U << n) - 1U);
    bitbuf_ >>= n;
    bitcnt_ -= n;
    return v;
  }

  bool stored() {
    bitbuf_ = 0;
    bitcnt_ = 0;
    if (pos_ + 4 > len_) return false;
    const std::size_t n = in_[pos_] | (static_cast<std::size_t>(in_[pos_ + 1]) << 8);
    pos_ += 4;
    if (pos_ + n > len_) return false;
    out_->insert(out_->end(), in_ + pos_, in_ + pos_ + n);
    pos_ += n;
    return true;
  }

  static void build(Huffman* h, const std::uint8_t* lengths, int n) {
    for (int i = 0; i < n; ++i) h->count[lengths[i]]++;
    h->count[0] = 0;
    std::uint16_t offs[16] = {};
    for (int len = 1; len < 15; ++len)
      offs[len + 1] = static_cast<std::uint16_t>(offs[len] + h->count[len]);
    for (int sym = 0; sym < n; ++sym) {
      if (lengths[sym] != 0) h->symbol[offs[lengths[sym]]++] = static_cast<std::uint16_t>(sym);
    }
  }

  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; ++len) {
      code |= static_cast<int>(bits(1));
      if (err_) return -1;
      const int count = h.count[len];
      if (code - count < first) return h.symbol[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    err_ = true;
    return -1;
  }

  bool codes(const Huffman& lencode, const Huffman& distcode) {
    static constexpr std::uint16_t kLBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                 15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr std::uint8_t kLExt[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr std::uint16_t kDBase[30] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr std::uint8_t kDExt[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                               6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    while (true) {
      int sym = decode(lencode);
      if (sym < 0) return false;
      if (sym < 256) {
        out_->push_back(static_cast<std::uint8_t>(sym));
      } else if (sym == 256) {
        return true;
      } else {
        sym -= 257;
        if (sym >= 29) return false;
        const std::size_t len = kLBase[sym] + bits(kLExt[sym]);
        const int dsym = decode(distcode);
        if (dsym < 0 || dsym >= 30) return false;
        const std::size_t dist = kDBase[dsym] + bits(kDExt[dsym]);
        if (err_ || dist > out_->size()) return false;
        const std::size_t from = out_->size() - dist;
        for (std::size_t i = 0; i < len; ++i) out_->push_back((*out_)[from + i]);
      }
    }
  }

  bool fixed() {
    std::uint8_t lengths[288 + 30];
    int i = 0;
    for (; i < 144; ++i) lengths[i] = 8;
    for (; i < 256; ++i) lengths[i] = 9;
    for (; i < 280; ++i) lengths[i] = 7;
    for (; i < 288; ++i) lengths[i] = 8;
    Huffman lencode, distcode;
    build(&lencode, lengths, 288);
    for (i = 0; i < 30; ++i) lengths[i] = 5;
    build(&distcode, lengths, 30);
    return codes(lencode, distcode);
  }

  bool dynamic() {
    static constexpr std::uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                11, 4,  12, 3, 13, 2, 14, 1, 15};
    const int nlen = static_cast<int>(bits(5)) + 257;
    const int ndist = static_cast<int>(bits(5)) + 1;
    const int ncode = static_cast<int>(bits(4)) + 4;
    if (err_ || nlen > 286 || ndist > 30) return false;
    std::uint8_t lengths[320] = {};
    for (int i = 0; i < ncode; ++i) lengths[kOrder[i]] = static_cast<std::uint8_t>(bits(3));
    Huffman lencode;
    build(&lencode, lengths, 19);
    int index = 0;
    while (index < nlen + ndist) {
      int sym = decode(lencode);
      if (sym < 0) return false;
      if (sym < 16) {
        lengths[index++] = static_cast<std::uint8_t>(sym);
        continue;
      }
      std::uint8_t len = 0;
      int rep = 0;
      if (sym == 16) {
        if (index == 0) return false;
        len = lengths[index - 1];
        rep = 3 + static_cast<int>(bits(2));
      } else if (sym == 17) {
        rep = 3 + static_cast<int>(bits(3));
      } else {
        rep = 11 + static_cast<int>(bits(7));
      }
      if (index + rep > nlen + ndist) return false;
      while (rep-- > 0) lengths[index++] = len;
    }
    Huffman lens, dists;
    build(&lens, lengths, nlen);
    build(&dists, lengths + nlen, ndist);
    return codes(lens, dists);
  }

  const std::uint8_t* in_;
  std::size_t len_;
  std::size_t pos_ = 0;
  std::uint32_t bitbuf_ = 0;
  int bitcnt_ = 0;
  bool err_ = false;
  std::vector<std::uint8_t>* out_ = nullptr;
};

struct Image {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // 3 bytes per pixel
};

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 2])) << 8) |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[at + 3]));
}

// 8-bit RGB or RGBA, not interlaced: what Chromium writes.
bool decode_png(const std::string& png, Image* img, std::string* why) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return *why = "not a PNG", false;
  std::size_t at = 8;
  int colour = -1;
  std::string idat;
  while (at + 12 <= png.size()) {
    const std::uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + len > png.size()) return *why = "chunk past the end", false;
    if (type == "IHDR") {
      img->width = be32(png, at + 8);
      img->height = be32(png, at + 12);
      const int depth = static_cast<std::uint8_t>(png[at + 16]);
      colour = static_cast<std::uint8_t>(png[at + 17]);
      const int interlace = static_cast<std::uint8_t>(png[at + 20]);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        return *why = "unexpected PNG format", false;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (colour < 0 || idat.size() < 6) return *why = "no IHDR or IDAT", false;
  std::vector<std::uint8_t> raw;
  // Skip the 2-byte zlib header; the Adler-32 trailer is not needed.
  Inflater inf(reinterpret_cast<const std::uint8_t*>(idat.data()) + 2, idat.size() - 2);
  if (!inf.run(&raw)) return *why = "inflate failed", false;
  const std::size_t bpp = colour == 6 ? 4 : 3;
  const std::size_t stride = img->width * bpp;
  if (raw.size() < (stride + 1) * img->height) return *why = "short image data", false;
  std::vector<std::uint8_t> prev(stride, 0), cur(stride);
  img->rgb.reserve(static_cast<std::size_t>(img->width) * img->height * 3);
  for (std::uint32_t y = 0; y < img->height; ++y) {
    const std::uint8_t* line = raw.data() + y * (stride + 1);
    const int filter = line[0];
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? cur[x - bpp] : 0;
      const int b = prev[x];
      const int c = x >= bpp ? prev[x - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c;
          const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          return *why = "bad filter type", false;
      }
      cur[x] = static_cast<std::uint8_t>(line[1 + x] + pred);
    }
    for (std::uint32_t x = 0; x < img->width; ++x) {
      img->rgb.insert(img->rgb.end(), cur.begin() + x * bpp, cur.begin() + x * bpp + 3);
    }
    std::swap(prev, cur);
  }
  return true;
}

TEST(ReplayHtml, ChromiumShowsTheDenials) {
  if (::access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << kChromium
                 << " is not installed: the HTML screenshot test needs headless Chromium "
                 << "(apt-get install chromium; tools/bootstrap.sh installs it for CI)";
  }
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", /*hostile=*/true);
  auto o = run_vigil({"replay", "--html", d / "report.html", log}, d.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;

  make_dirs(d / "profile");
  const std::string png = d / "shot.png";
  // --no-sandbox: Chromium's own sandbox refuses to run as root (CI); the page is a local
  // file with a CSP that forbids every load, and no script.
  const std::string cmd =
      "timeout 120 " + std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --force-color-profile=srgb --hide-scrollbars"
      " --user-data-dir='" +
      (d / "profile") + "' --screenshot='" + png + "' --window-size=1200,900 'file://" +
      (d / "report.html") + "' > '" + (d / "chromium.log") + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << "chromium failed:\n"
                                                     << read_file(d / "chromium.log");
  ASSERT_TRUE(exists(png)) << read_file(d / "chromium.log");
  const std::string bytes = read_file(png);
  EXPECT_GT(bytes.size(), 10000U) << "a real page, not a blank image";

  Image img;
  std::string why;
  ASSERT_TRUE(decode_png(bytes, &img, &why)) << why;
  EXPECT_EQ(img.width, 1200U);
  EXPECT_EQ(img.height, 900U);
  std::size_t deny_pixels = 0;
  std::size_t distinct_rows = 0;
  for (std::size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    const int dr = std::abs(img.rgb[i] - kDenyR), dg = std::abs(img.rgb[i + 1] - kDenyG),
              db = std::abs(img.rgb[i + 2] - kDenyB);
    if (dr <= 3 && dg <= 3 && db <= 3) ++deny_pixels;
  }
  for (std::uint32_t y = 1; y < img.height; ++y) {
    if (std::equal(img.rgb.begin() + (y - 1) * img.width * 3, img.rgb.begin() + y * img.width * 3,
                   img.rgb.begin() + y * img.width * 3)) {
      continue;
    }
    ++distinct_rows;
  }
  EXPECT_GT(distinct_rows, 100U) << "the screenshot has content";
  // The "Denied" banner alone is ~1150 x 35 px; the denied rows' verdict cells add more.
  EXPECT_GT(deny_pixels, 20000U) << "the denial highlight colour is on screen";
}

// Issue 17: the report of a real session that changed files shows each diff inline, its
// added lines in their colour, in a real browser; the DOM Chromium built has the diff lines.
TEST(ReplayHtml, ChromiumShowsTheChangesWithTheirDiffs) {
  if (::access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << kChromium << " is not installed: the HTML screenshot test needs headless "
                 << "Chromium (apt-get install chromium; tools/bootstrap.sh installs it for CI)";
  }
  TempDir ws, d;
  write_file(ws / "calc.py", "a = 1\nb = 2\nc = 3\n");
  write_file(ws / "gone.txt", "to be removed\n");
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", d.path()}};
  auto run = run_vigil({"run", "--log", d / "s.jsonl", "--", "sh", "-c",
                        "sed -i 's/b = 2/b = 20000/' calc.py && rm gone.txt && "
                        "printf 'line one\\nline two\\n' > new.txt"},
                       ws.path(), 120, env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto o = run_vigil({"replay", "--html", d / "report.html", d / "s.jsonl"}, d.path(), 60, env);
  ASSERT_EQ(o.exit_code, 0) << o.err;

  make_dirs(d / "profile");
  const std::string png = d / "shot.png";
  const std::string chromium =
      "timeout 120 " + std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --force-color-profile=srgb --hide-scrollbars"
      " --user-data-dir='" + (d / "profile") + "' ";
  const std::string page = " 'file://" + (d / "report.html") + "'";
  int rc = std::system((chromium + "--screenshot='" + png + "' --window-size=1200,1400" + page +
                        " > '" + (d / "chromium.log") + "' 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << read_file(d / "chromium.log");
  rc = std::system((chromium + "--dump-dom" + page + " > '" + (d / "dom.html") + "' 2>/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  const std::string dom = read_file(d / "dom.html");
  for (const std::string& want :
       {std::string("<span class=\"del\">-b = 2</span>"), std::string("<span class=\"add\">+b = 20000</span>"),
        std::string("<span class=\"add\">+line two</span>"), std::string("<span class=\"del\">-to be removed</span>"),
        "--- " + (ws / "calc.py"), std::string("3 path(s) changed: 1 created, 1 modified, 1 deleted, 0 renamed")}) {
    EXPECT_NE(dom.find(want), std::string::npos) << want;
  }
  const std::string bytes = read_file(png);
  EXPECT_GT(bytes.size(), 10000U) << "a real page, not a blank image";
  Image img;
  std::string why;
  ASSERT_TRUE(decode_png(bytes, &img, &why)) << why;
  EXPECT_EQ(img.width, 1200U);
  std::size_t added = 0, removed = 0;
  for (std::size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    auto near = [&](int r, int g, int b) {
      return std::abs(img.rgb[i] - r) <= 3 && std::abs(img.rgb[i + 1] - g) <= 3 && std::abs(img.rgb[i + 2] - b) <= 3;
    };
    added += near(0xda, 0xfb, 0xe1) ? 1 : 0;
    removed += near(0xff, 0xeb, 0xe9) ? 1 : 0;
  }
  EXPECT_GT(added, 5000U) << "added lines are on screen in their colour";
  EXPECT_GT(removed, 5000U) << "removed lines are on screen in their colour";
}

}  // namespace
}  // namespace vigil::test
