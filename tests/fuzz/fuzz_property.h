// What every fuzz target does when a property beyond "no crash, no UB" is violated: abort
// naming the file and line, which libFuzzer reports as a crash and saves with its input.
#pragma once

#include <cstdio>
#include <cstdlib>

[[noreturn]] inline void fuzz_property_violated(const char* file, int line) {
  std::fprintf(stderr, "property violated at %s:%d\n", file, line);
  std::abort();
}
#define fail() fuzz_property_violated(__FILE__, __LINE__)
