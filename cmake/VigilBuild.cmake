# The build flags every part shares, in one place (included once by the top-level
# CMakeLists.txt):
#   vigil_enable_warnings()      the warning set; -Werror only with -DVIGIL_WERROR=ON (the dev
#                                build: tools/test.sh and CI). A user's or packager's build
#                                never fails on a warning a newer compiler invents.
#   vigil_fuzz_target(NAME [SOURCES ...] [LIBS ...])
#                                a libFuzzer target built from tests/fuzz/NAME.cc and the
#                                SOURCES (relative to the calling CMakeLists, compiled
#                                instrumented), linked with LIBS; clang only (-DVIGIL_FUZZ=ON,
#                                see tools/fuzz.sh).
include_guard(GLOBAL)

set(VIGIL_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                        -Wnon-virtual-dtor -Wimplicit-fallthrough)
set(VIGIL_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
                     -fno-omit-frame-pointer)

# GCC 12 reports a false -Wrestrict when, at -O3, it inlines std::string's operator+ with a
# literal on the left (GCC PR 105329, fixed in GCC 13): Debian 12's compiler does it in
# several files of a Release build. Off for that compiler's -O3 (Release) builds only; the
# dev build and newer compilers keep the check.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND VIGIL_WARNING_FLAGS $<$<CONFIG:Release>:-Wno-restrict>)
endif()

macro(vigil_enable_warnings)
  add_compile_options(${VIGIL_WARNING_FLAGS})
  if(VIGIL_WERROR)
    add_compile_options(-Werror)
  endif()
endmacro()

function(vigil_fuzz_target name)
  cmake_parse_arguments(FUZZ "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "VIGIL_FUZZ needs clang (libFuzzer); got ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.cc ${FUZZ_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  if(FUZZ_LIBS)
    target_link_libraries(${name} PRIVATE ${FUZZ_LIBS})
  endif()
  target_compile_options(${name} PRIVATE ${VIGIL_FUZZ_FLAGS})
  target_link_options(${name} PRIVATE ${VIGIL_FUZZ_FLAGS})
endfunction()
