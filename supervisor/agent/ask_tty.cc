#include "supervisor/agent/ask_tty.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <string>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {

namespace {

// "o" / "once", "s" / "session", "a" / "always", "d" / "deny" (any case, spaces around).
std::string answer_word(std::string line) {
  std::string w;
  for (const char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* full : {"once", "session", "always", "deny"}) {
    if (w == full || (w.size() == 1 && w[0] == full[0])) return full;
  }
  return "";
}

// "y" / "yes" (any case, spaces around): "yes"; anything else "".
std::string answer_word_yes(const std::string& line) {
  std::string w;
  for (const char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return w == "y" || w == "yes" ? "yes" : "";
}

// Before a question: SGR reset, DECSTR (soft reset: margins, modes, cursor visible), and
// back to the main screen, so nothing the command set up hides what vigil asks.
constexpr std::string_view kTerminalReset = "\x1b[0m\x1b[!p\x1b[?1049l\x1b[?25h";

// The terminal device behind `fd` (0: not a terminal). /dev/tty is a device of its own
// (5,0) that stands for the caller's controlling terminal: TIOCGDEV names the real one.
dev_t terminal_device(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || !::isatty(fd)) return 0;
  unsigned int dev = 0;
  if (::ioctl(fd, TIOCGDEV, &dev) == 0) return static_cast<dev_t>(dev);
  return st.st_rdev;
}

}  // namespace

Result<UniqueFd> open_ask_tty() {
  UniqueFd fd(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    return system_error(
        "--ask-tty: no terminal to ask on (/dev/tty); run it from a terminal, or use `vigil "
        "serve`, whose client answers");
  }
  return fd;
}

TtyAsker::TtyAsker(UniqueFd tty) : tty_(std::move(tty)) {
  rdev_ = terminal_device(tty_.get());
  thread_ = std::thread([this] { loop(); });
}

TtyAsker::~TtyAsker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TtyAsker::ask(const AskPrompt& prompt, AskReply reply) {
  const auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(prompt.timeout_s));
  {
    std::lock_guard lock(mu_);
    queue_.push_back({prompt, std::move(reply), std::chrono::steady_clock::now() + wait});
  }
  wake_.notify_all();
}

bool TtyAsker::is_this_terminal(int fd) const {
  return rdev_ != 0 && fd >= 0 && terminal_device(fd) == rdev_;
}

bool TtyAsker::write_output(int fd, std::string_view bytes) {
  std::lock_guard screen(screen_);
  return write_all_to(fd, bytes);
}

void TtyAsker::say(const std::string& text) { (void)write_all_to(tty_.get(), text); }

void TtyAsker::loop() {
  for (;;) {
    Question q;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    // No command's output reaches the terminal until this question is answered.
    std::lock_guard screen(screen_);
    prompt_one(q);
  }
}

bool TtyAsker::read_line(const Question& q, std::string& line) {
  for (;;) {
    // A command that turned the terminal's ICRNL off makes Enter a '\r'.
    const auto end = pending_.find_first_of("\r\n");
    if (end != std::string::npos) {
      line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        q.deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{tty_.get(), POLLIN, 0};
    const int n = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 200)));
    {
      std::lock_guard lock(mu_);
      if (stopping_) return false;
    }
    if (n <= 0) continue;
    char buf[256];
    const ssize_t got = ::read(tty_.get(), buf, sizeof buf);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return false;  // the terminal is gone: the request times out as unanswered
    }
    pending_.append(buf, static_cast<std::size_t>(got));
    if (pending_.size() > 4096) pending_.erase(0, pending_.size() - 4096);
  }
}

void TtyAsker::prompt_one(Question& q) {
  const AskPrompt& p = q.prompt;
  const std::string choices =
      p.can_always ? "[o]nce, [s]ession, [a]lways, [d]eny" : "[o]nce, [s]ession, [d]eny";
  // Whatever the command printed before (colours that hide text, scroll margins, the
  // alternate screen) is undone first; what was typed before the question is no answer.
  pending_.clear();
  say(std::string(kTerminalReset) + "\r\nvigil: command " + std::to_string(p.command) +
      " wants " + escape_text(p.entry) + " (" + escape_text(p.proto) + ", " +
      escape_text(p.address) + "), not on the allow list.\r\n");
  for (;;) {  // asked again after an answer that is not one
    say("vigil: allow? " + choices + ": ");
    std::string line;
    if (!read_line(q, line)) {
      if (std::chrono::steady_clock::now() >= q.deadline)
        say("\r\nvigil: no answer in time: " + escape_text(p.entry) + " denied\r\n");
      return;
    }
    const std::string word = answer_word(line);
    if (word.empty()) {
      say("vigil: answer o, s" + std::string(p.can_always ? ", a" : "") + " or d\r\n");
      continue;
    }
    if (word == "always" && !p.can_always) {
      say("vigil: always needs a settings file to write into (vigil session start --settings "
          "FILE); answer o, s or d\r\n");
      continue;
    }
    if (word == "always") {
      // The exact entry echoed back: what is written for every later session.
      say("vigil: always allow exactly " + escape_text(p.entry) +
          ", written into the settings file for every later session? [y/N]: ");
      std::string confirm;
      if (!read_line(q, confirm)) {
        if (std::chrono::steady_clock::now() >= q.deadline)
          say("\r\nvigil: no answer in time: " + escape_text(p.entry) + " denied\r\n");
        return;
      }
      const std::string yes = answer_word_yes(confirm);
      if (yes.empty()) {
        say("vigil: not confirmed; " + escape_text(p.entry) + " is not written\r\n");
        continue;
      }
    }
    if (!q.reply(word)) say("vigil: too late: the request had already ended\r\n");
    return;
  }
}

}  // namespace vigil
