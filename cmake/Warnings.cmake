# One interface target carries the project's warning set; every dprobe
# target links it so the flags stay in one place.
add_library(dprobe_warnings INTERFACE)
target_compile_options(dprobe_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(DPROBE_WERROR)
  target_compile_options(dprobe_warnings INTERFACE -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC builds for arm64 (cmake/toolchain-aarch64.cmake); clang's set above
  # is the project's gate. GCC 12's -Wnull-dereference and -Wrestrict look
  # into libstdc++ after inlining and report paths that cannot be taken,
  # and its -Wshadow flags scoped enumerators and the parameter of a lambda
  # given to a GoogleTest macro; its -Wmissing-field-initializers flags a
  # designated initializer that leaves fields to their defaults, which is
  # what one is for (GCC 13 no longer does): off for GCC only.
  target_compile_options(dprobe_warnings INTERFACE -Wno-null-dereference -Wno-restrict
                         -Wno-shadow -Wno-missing-field-initializers)
endif()
