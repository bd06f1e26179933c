# Run at build time (cmake -P): writes OUTPUT, a header that defines
# DPROBE_GIT_REVISION as `git describe` says it of SOURCE_DIR ("unknown"
# outside a git checkout), and rewrites it only when that changes, so
# that only what includes it is rebuilt, and only then.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE revision
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE status
  ERROR_QUIET)
if(NOT status EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
file(WRITE "${OUTPUT}.new" "#define DPROBE_GIT_REVISION \"${revision}\"\n")
file(COPY_FILE "${OUTPUT}.new" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.new")
