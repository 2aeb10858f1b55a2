// Errors are values across module boundaries. Result<T> holds either a T or an Error;
// nothing here throws, so it is safe in code that runs after fork or as PID 1
// (as long as T's own operations do not allocate in such a context).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace vigil {

// What kind of failure, so callers can map it to an exit code without parsing text.
enum class Errc {
  kInvalidPolicy,  // the settings file or a CLI value is wrong: the user must fix input
  kNotFound,       // a file or program that must exist does not
  kUnsupported,    // a setting or kernel feature we do not (yet) handle
  kSystem,         // a syscall failed; message carries strerror
  kRefused,        // a safety check refused to proceed (e.g. writable settings file)
  kInternal,       // a bug in vigil
};

struct Error {
  Errc code;
  std::string message;
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return err_; }
  Error&& error() && { return std::move(err_); }

 private:
  Error err_{Errc::kInternal, {}};
  bool ok_ = true;
};

// Early return of a failed Result's error, so the failure path reads as one line:
//   auto plan = build_plan(policy);
//   VIGIL_TRY(plan);                       // was: if (!plan) return std::move(plan).error();
//   VIGIL_TRY_VOID(write_all(fd, bytes));  // a Result that is not kept
// The enclosing function returns Result<U> (any U): the Error moves into it.
#define VIGIL_TRY(result)                            \
  do {                                               \
    if (!(result)) return std::move(result).error(); \
  } while (0)
#define VIGIL_TRY_VOID(expr)                          \
  do {                                                \
    if (auto vigil_try_r_ = (expr); !vigil_try_r_) {  \
      return std::move(vigil_try_r_).error();         \
    }                                                 \
  } while (0)

// Builds "what: strerror(errno)" for kSystem errors. Reads errno at call time.
Error system_error(std::string what);
Error system_error(std::string what, int err);

}  // namespace vigil
