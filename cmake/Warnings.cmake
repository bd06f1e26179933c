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
