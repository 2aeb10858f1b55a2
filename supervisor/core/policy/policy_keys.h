// The settings key table (policy_keys.cc): every key the loader knows, at every level,
// with what vigil does with it. The loader (policy_loader.h) and its state machine
// (policy_loader_detail.h) read it; so do `vigil explain` and the srt key test.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// How a settings key is treated. Every key of srt 0.0.83's schema has one (the table
// test compares tests/data/srt_0.0.83_keys.txt with settings_key_table()).
enum class Support {
  kHandled,          // read into the Policy and acted on
  kUnsupported,      // refused: the message says why and what to do instead
  kUnsupportedIfOn,  // only true is refused (false is the default and harmless)
  kNotApplicable,    // no use for it in vigil: accepted, with a warning saying so
};

struct KeySpec {
  std::string_view key;
  Support support;
  std::string_view what;     // refusals: what the key asks for and why vigil says no;
                             // kNotApplicable: why it has no effect
  std::string_view instead;  // refusals: what to do instead
};

struct SettingsKey {
  std::string path;  // dotted: "network.parentProxy"
  KeySpec spec;
};

// Every key the loader knows, at every level it reads.
std::vector<SettingsKey> settings_key_table();

// The keys of one level ("" for the top, "network", "vigil.limits", ...); empty for a
// level vigil does not read.
std::span<const KeySpec> keys_at(std::string_view prefix);

// The message a refused key gets (after "<file>: <position>: <key>: ").
std::string refusal(const KeySpec& spec);

// Levenshtein-nearest candidate within a small distance, or "" when none is close.
std::string nearest_key(std::string_view key, const std::vector<std::string_view>& candidates);

}  // namespace vigil
