// `vigil learn`: the smallest settings change that would have allowed what sessions were
// denied, learnt from their logs (the sandbox enforced all along: nothing ran unconfined
// to learn it). Pure: records in, proposals out; the command (learn_command.cc) reads the
// logs and prints.
//
// The change is a list of entries to add, each with what it would have allowed:
//   filesystem.allowWrite  the stable directory of each denied write (stable_dir below)
//   network.allowedDomains "host:port" of each connection no entry allowed
// Never proposed, and listed as "left denied, and why": a mandatory-deny name, a denyRead
// or denyWrite path (deny wins over any allowWrite), a system directory, `/`, a file
// straight in $HOME or scratch in /tmp (the session has its own $TMPDIR), a directory that
// holds the settings file (a session must not widen its own next launch), a connection a
// deniedDomains entry or the address guard refused.
//
// Bounded: one entry per proposed directory or host:port, and at most kMaxLeftDenied
// distinct "left denied" lines (the rest counted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/domain_matcher.h"
#include "supervisor/core/policy/code_places.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

// A path component that a program made up (mktemp's tmp.qZzQjNkAu2, a UUID or hash, a pid
// or timestamp) or a scratch name (tmp, .tmp, temp): naming it in the settings would
// allow one run's file, not the next run's.
bool is_volatile_name(std::string_view name);

// The directory to allow for a denied write to `path` (absolute), or "" when there is no
// safe one: below $HOME the first component (two under ~/.cache and ~/.config, three under
// ~/.local/share and ~/.local/state), below /tmp and /var/tmp the first, elsewhere the
// first three (never /var/cache or /var/log themselves); stopping above the first
// volatile name. The caller then narrows it past places that run code (code_places.h). `is_dir`: the path is itself the
// directory being made (mkdir), so it may be the answer. "" when the answer would be
// $HOME, /tmp, /var/tmp or / itself.
std::string stable_dir(std::string_view path, std::string_view home, bool is_dir);

struct Proposal {
  std::string entry;    // as it goes into the settings file ("~/.npm", "host:443")
  std::string path;     // allowWrite: the absolute directory ("" for network entries)
  std::uint64_t count = 0;
  std::string example;  // the first denied path or target it covers
};

struct LeftDenied {
  std::string target;
  std::string why;
  std::uint64_t count = 0;
};

struct LearnResult {
  std::vector<Proposal> allow_write;
  std::vector<Proposal> allowed_domains;
  std::vector<LeftDenied> left;
  std::uint64_t left_unlisted = 0;      // past kMaxLeftDenied
  std::uint64_t proposals_dropped = 0;  // denials past kMaxProposals distinct entries
  std::uint64_t denials = 0;
  std::uint64_t already_allowed = 0;  // denied then, allowed by the current settings
};

class Learner {
 public:
  static constexpr std::size_t kMaxLeftDenied = 200;
  // Distinct directories and host:port entries kept: a log naming more (a command that
  // reached a million hosts) is not a policy to learn from; the rest are counted.
  static constexpr std::size_t kMaxProposals = 10000;
  // `current` and `plan`: the settings to extend; `settings_file`: where they live ("" for
  // the embedded default), never made writable. The references must outlive the Learner.
  Learner(const Policy& current, const Plan& plan, const proxy::DomainMatcher& matcher,
          std::string settings_file);
  // The directories on PATH (code_places.h): never proposed, nor anything above them.
  void set_path_dirs(const std::vector<std::string>& dirs);
  void take(const events::Event& e);
  LearnResult result() const;

 private:
  void propose_dir(const std::string& dir, const std::string& example);
  void leave(const std::string& target, const std::string& why);
  const Policy& policy_;
  const Plan& plan_;
  const proxy::DomainMatcher& matcher_;
  std::string settings_file_;
  std::vector<CodePlace> places_;  // code_places(): never proposed, nor above
  std::map<std::string, Proposal> dirs_;
  std::map<std::string, Proposal> hosts_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> left_;
  std::uint64_t left_unlisted_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t denials_ = 0;
  std::uint64_t already_ = 0;
};

// The text `vigil learn` prints: the entries to add (one per line, `+ "entry"`, with what
// each allows as a comment), then what is left denied and why. Raw: the caller escapes.
std::vector<std::string> learn_report_lines(const LearnResult& r, bool from_default);

// The settings text with the entries added (`text`: the current settings file, "" for the
// embedded default, whose working directory is then listed as "." since a settings file
// has no default writable root). Errc::kInvalidPolicy when `text` is not a settings object.
Result<std::string> learned_settings(std::string_view text, const LearnResult& r);

}  // namespace vigil
