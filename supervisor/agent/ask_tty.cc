#include "supervisor/agent/ask_tty.h"

#include <fcntl.h>
#include <poll.h>
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
    prompt_one(q);
  }
}

void TtyAsker::prompt_one(Question& q) {
  const AskPrompt& p = q.prompt;
  const std::string choices =
      p.can_always ? "[o]nce, [s]ession, [a]lways, [d]eny" : "[o]nce, [s]ession, [d]eny";
  say("\nvigil: command " + std::to_string(p.command) + " wants " + escape_text(p.entry) + " (" +
      escape_text(p.proto) + ", " + escape_text(p.address) + "), not on the allow list.\n");
  std::string line;
  bool prompt = true;  // again after an answer that is not one
  for (;;) {
    if (prompt) say("vigil: allow? " + choices + ": ");
    prompt = false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        q.deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      say("\nvigil: no answer in time: " + escape_text(p.entry) + " denied\n");
      return;
    }
    pollfd pfd{tty_.get(), POLLIN, 0};
    const int timeout_ms = static_cast<int>(std::min<long long>(left.count(), 200));
    const int n = ::poll(&pfd, 1, timeout_ms);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (n <= 0) continue;
    char buf[256];
    const ssize_t got = ::read(tty_.get(), buf, sizeof buf);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return;  // the terminal is gone: the request times out as unanswered
    }
    line.append(buf, static_cast<std::size_t>(got));
    const auto nl = line.find('\n');
    if (nl == std::string::npos) continue;
    const std::string word = answer_word(line.substr(0, nl));
    line.clear();
    prompt = true;
    if (word.empty()) {
      say("vigil: answer o, s" + std::string(p.can_always ? ", a" : "") + " or d\n");
      continue;
    }
    if (word == "always" && !p.can_always) {
      say("vigil: always needs a settings file to write into (vigil session start --settings "
          "FILE); answer o, s or d\n");
      continue;
    }
    if (!q.reply(word)) say("vigil: too late: the request had already ended\n");
    return;
  }
}

}  // namespace vigil
