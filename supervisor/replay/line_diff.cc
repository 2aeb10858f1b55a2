#include "supervisor/replay/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace vigil {
namespace {

// Lines with their newline kept, so that a last line without one differs from the same
// line with one (as diff(1) has it).
std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t nl = s.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? s.size() : nl + 1;
    out.push_back(s.substr(start, end - start));
    start = end;
  }
  return out;
}

enum class Op : std::uint8_t { kSame, kDel, kIns };
struct Edit {
  Op op;
  std::size_t a, b;  // line indexes in before/after (the one that applies)
};

// The shortest edit script of a[0..n) -> b[0..m), or false past max_d edits.
bool myers(const std::vector<std::string_view>& a, std::size_t a0, std::size_t n,
           const std::vector<std::string_view>& b, std::size_t b0, std::size_t m,
           std::size_t max_d, std::vector<Edit>* out) {
  const long N = static_cast<long>(n), M = static_cast<long>(m);
  const long limit = std::min<long>(N + M, static_cast<long>(max_d));
  std::vector<long> v(static_cast<std::size_t>(2 * limit + 3), 0);
  const long off = limit + 1;
  std::vector<std::vector<long>> trace;  // v over [-d, d] after each round d
  long found = -1;
  for (long d = 0; d <= limit && found < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                          : v[off + k - 1] + 1;
      long y = x - k;
      while (x < N && y < M && a[a0 + x] == b[b0 + y]) ++x, ++y;
      v[off + k] = x;
      if (x >= N && y >= M) found = d;
    }
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found < 0) return false;
  std::vector<Edit> rev;
  long x = N, y = M;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& pv = trace[static_cast<std::size_t>(d - 1)];
    auto at = [&](long k) { return pv[static_cast<std::size_t>(k + d - 1)]; };
    const long k = x - y;
    const long pk = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    const long px = at(pk), py = px - pk;
    while (x > px && y > py) {
      --x, --y;
      rev.push_back({Op::kSame, a0 + static_cast<std::size_t>(x), b0 + static_cast<std::size_t>(y)});
    }
    if (x == px) {
      rev.push_back({Op::kIns, a0 + static_cast<std::size_t>(x), b0 + static_cast<std::size_t>(py)});
    } else {
      rev.push_back({Op::kDel, a0 + static_cast<std::size_t>(px), b0 + static_cast<std::size_t>(y)});
    }
    x = px, y = py;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    rev.push_back({Op::kSame, a0 + static_cast<std::size_t>(x), b0 + static_cast<std::size_t>(y)});
  }
  out->insert(out->end(), rev.rbegin(), rev.rend());
  return true;
}

std::string range(std::size_t start, std::size_t count) {
  // diff(1)'s spelling: the first line (1-based), ",count" unless it is 1; an empty side
  // names the line before it.
  const std::size_t first = count == 0 ? start : start + 1;
  return std::to_string(first) + (count == 1 ? "" : "," + std::to_string(count));
}

}  // namespace

bool looks_like_text(std::string_view bytes) {
  return bytes.substr(0, 8000).find('\0') == std::string_view::npos;
}

LineDiff unified_diff(std::string_view before, std::string_view after, DiffOptions opt) {
  LineDiff out;
  const auto a = split_lines(before);
  const auto b = split_lines(after);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
    ++tail;
  if (head == a.size() && head == b.size()) return out;
  std::vector<Edit> edits;
  for (std::size_t i = 0; i < head; ++i) edits.push_back({Op::kSame, i, i});
  const std::size_t n = a.size() - head - tail, m = b.size() - head - tail;
  if (!myers(a, head, n, b, head, m, opt.max_edits, &edits)) {
    out.shortened = true;
    for (std::size_t i = 0; i < n; ++i) edits.push_back({Op::kDel, head + i, head});
    for (std::size_t j = 0; j < m; ++j) edits.push_back({Op::kIns, head + n, head + j});
  }
  for (std::size_t i = 0; i < tail; ++i)
    edits.push_back({Op::kSame, a.size() - tail + i, b.size() - tail + i});

  auto text = [&](const Edit& e) {
    const std::string_view l = e.op == Op::kIns ? b[e.b] : a[e.a];
    const bool nl = !l.empty() && l.back() == '\n';
    const char mark = e.op == Op::kSame ? ' ' : e.op == Op::kDel ? '-' : '+';
    out.lines.push_back(mark + std::string(nl ? l.substr(0, l.size() - 1) : l));
    if (!nl) out.lines.emplace_back(kNoNewlineMarker);
  };
  // Hunks: each change with `context` unchanged lines either side, merged when close.
  std::size_t i = 0;
  while (i < edits.size()) {
    while (i < edits.size() && edits[i].op == Op::kSame) ++i;
    if (i == edits.size()) break;
    const std::size_t start = i >= opt.context ? i - opt.context : 0;
    std::size_t end = i;  // one past the hunk's last edit
    while (true) {
      while (end < edits.size() && edits[end].op != Op::kSame) ++end;
      std::size_t same = end;
      while (same < edits.size() && edits[same].op == Op::kSame) ++same;
      if (same < edits.size() && same - end <= 2 * opt.context) {
        end = same;
        continue;
      }
      end = std::min(edits.size(), end + opt.context);
      break;
    }
    std::size_t a_start = edits[start].a, b_start = edits[start].b, na = 0, nb = 0;
    for (std::size_t j = start; j < end; ++j) {
      na += edits[j].op != Op::kIns ? 1 : 0;
      nb += edits[j].op != Op::kDel ? 1 : 0;
    }
    out.lines.push_back("@@ -" + range(a_start, na) + " +" + range(b_start, nb) + " @@");
    for (std::size_t j = start; j < end; ++j) text(edits[j]);
    i = end;
  }
  return out;
}

}  // namespace vigil
