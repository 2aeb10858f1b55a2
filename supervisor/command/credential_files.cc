#include "supervisor/command/credential_files.h"

#include <fcntl.h>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/command/command_args.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

constexpr off_t kMaxMaskedFile = 1 << 20;

// The file's text, or why it cannot be masked (a directory, not a regular file, too
// large, not UTF-8, unreadable). ENOENT: an empty reason and no text.
struct Read {
  std::optional<std::string> text;
  std::string why_not;
};

Read read_credential(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return {};
    if (errno == EISDIR) return {std::nullopt, "it is a directory (mask one file inside it)"};
    return {std::nullopt, std::string("it cannot be read here: ") + std::strerror(errno)};
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return {std::nullopt, "it cannot be read here"};
  if (S_ISDIR(st.st_mode)) return {std::nullopt, "it is a directory (mask one file inside it)"};
  if (!S_ISREG(st.st_mode)) return {std::nullopt, "it is not a regular file"};
  if (st.st_size > kMaxMaskedFile) return {std::nullopt, "it is larger than 1 MiB"};
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (!is_valid_utf8(text))
    return {std::nullopt, "it is not UTF-8 text (binary files cannot be masked)"};
  return {std::move(text), ""};
}

}  // namespace

Result<MaskedFiles> mask_credential_files(const Policy& policy, const Plan& plan,
                                          const std::string& session_dir,
                                          proxy::SentinelTable* table) {
  MaskedFiles out;
  std::size_t n = 0;
  for (const auto& f : policy.credentials.files) {
    if (f.rule.mode != CredentialMode::kMask) continue;
    const std::string real = resolve_symlinks(f.path);
    if (decide(plan, real, Access::kRead).verdict == Verdict::kDenied) continue;
    const Read r = read_credential(real);
    auto hide = [&](const std::string& why) {
      out.hide.push_back(session_rule(real, f.rule.origin + ".path"));
      if (!why.empty())
        out.warnings.push_back(f.rule.origin + " (" + f.written + "): " + why +
                               ": it is hidden from the command instead of masked");
    };
    if (!r.text) {
      if (!r.why_not.empty()) hide(r.why_not);
      continue;
    }
    auto masked = proxy::mask_file_content(f, policy.net.allowed_domains, *r.text, table);
    VIGIL_TRY(masked);
    for (auto& w : masked->warnings) out.warnings.push_back(std::move(w));
    if (!masked->fake) {
      hide("");
      continue;
    }
    const std::string copy = session_dir + "/credential-" + std::to_string(n++);
    UniqueFd fd(::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return system_error("cannot create " + copy);
    VIGIL_TRY_VOID(write_all(fd.get(), *masked->fake, copy));
    out.binds.push_back({copy, real, f.rule.origin + ": masked (sentinels in place of the secret)"});
  }
  return out;
}

}  // namespace vigil
