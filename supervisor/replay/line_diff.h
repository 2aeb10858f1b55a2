// A unified diff of two texts, line by line (Myers' O((N+M)D) algorithm over the lines
// left once the common head and tail are cut), for `vigil replay --diff` and the HTML
// report. Pure.
//
// Bounded: past max_edits differing lines the search stops and the middle is shown as
// replaced whole (every old line removed, every new one added), which is still a correct
// diff, only not the shortest; the search's memory grows with max_edits squared.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

struct DiffOptions {
  std::size_t context = 3;
  std::size_t max_edits = 2000;
};

struct LineDiff {
  // Raw lines, without their newline: "@@ -1,3 +1,4 @@", " same", "-old", "+new", and
  // "\ No newline at end of file" after a last line that has none. Empty: no difference.
  std::vector<std::string> lines;
  bool shortened = false;  // max_edits was reached: the middle is shown replaced whole
};

// The marker line after a last line without a newline: vigil's own words, never content
// (every content line starts with ' ', '-' or '+'), so views print it as it is.
inline constexpr const char* kNoNewlineMarker = "\\ No newline at end of file";

LineDiff unified_diff(std::string_view before, std::string_view after, DiffOptions opt = {});

// Whether a file's bytes are shown as text: no NUL in its first 8000 bytes (git's test).
bool looks_like_text(std::string_view bytes);

}  // namespace vigil
