// What a settings file is read against: the directory relative paths resolve from and
// what ~ expands to. Its own header so that the loader's parts share it without including
// the loader's interface (policy_loader.h).
#pragma once

#include <string>

namespace vigil {

struct LoadContext {
  std::string cwd;   // absolute, what relative settings paths are resolved against
  std::string home;  // what ~ expands to
};

}  // namespace vigil
