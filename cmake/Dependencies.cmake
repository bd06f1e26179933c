# Every external library comes from Debian (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(zydis REQUIRED)
# GNU's libiberty (libiberty-dev): its demangler reads Rust's names, legacy
# and v0, which the C++ runtime's does not.
find_path(LIBIBERTY_INCLUDE_DIR demangle.h PATH_SUFFIXES libiberty REQUIRED)
find_library(LIBIBERTY_LIBRARY NAMES libiberty.a iberty REQUIRED)
add_library(libiberty STATIC IMPORTED)
set_target_properties(libiberty PROPERTIES IMPORTED_LOCATION ${LIBIBERTY_LIBRARY}
                      INTERFACE_INCLUDE_DIRECTORIES ${LIBIBERTY_INCLUDE_DIR})
if(DPROBE_TESTS)
  find_package(GTest REQUIRED)
endif()
if(DPROBE_BENCH)
  find_package(benchmark REQUIRED)
endif()
