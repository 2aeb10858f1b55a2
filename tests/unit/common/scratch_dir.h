// A private temp directory for the session-directory tests, removed with everything in
// it by the walker under test (supervisor/backstop/remove_tree.h).
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <string>

#include "supervisor/backstop/remove_tree.h"

namespace vigil::testing_scratch {

struct Scratch {
  std::string path;
  Scratch() {
    char t[] = "/tmp/vigil-sd-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~Scratch() { (void)remove_tree(path); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string operator/(const std::string& rel) const { return path + "/" + rel; }
};

inline bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace vigil::testing_scratch
