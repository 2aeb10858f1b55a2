#include "observer/git_rules.h"

namespace vigil::init {

std::string git_write_refusal(std::string_view /*rel_in_root*/) { return {}; }

}  // namespace vigil::init
