# `cmake --install` and the Debian package (CPack).
#
#   PREFIX/bin/dprobe
#   PREFIX/lib/dprobe/libdprobe_agent.so, libdprobe_attach.so
#   PREFIX/share/man/man1/dprobe.1
#   PREFIX/share/bash-completion/completions/dprobe
#
# The CLI finds the agent beside itself (the build tree) or at
# DPROBE_AGENT_DIR_FROM_BIN from its own directory (an installed tree, for
# any prefix: the path is relative).
include(GNUInstallDirs)
set(DPROBE_INSTALL_AGENT_DIR "lib/dprobe")
file(RELATIVE_PATH DPROBE_AGENT_DIR_FROM_BIN "/prefix/${CMAKE_INSTALL_BINDIR}"
     "/prefix/${DPROBE_INSTALL_AGENT_DIR}")

install(FILES ${PROJECT_SOURCE_DIR}/docs/dprobe.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/completion/dprobe.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME dprobe)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dprobe)
set(CPACK_PACKAGE_VENDOR "The dprobe Authors")
set(CPACK_PACKAGE_CONTACT "The dprobe Authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kprobe-style dynamic probes for user-space programs")
set(CPACK_PACKAGE_DESCRIPTION
    "dprobe puts probes on any instruction of a running or starting program, fetches \
registers, memory and strings there, and prints the hits as the kernel's trace. \
The probes run inside the traced process.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The libraries' packages (libelf1, libdw1, libfmt9, ...) from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The CLI only: the agent keeps its symbols (dprobe reads them to attach).
set(CPACK_STRIP_FILES "${CMAKE_INSTALL_BINDIR}/dprobe")
include(CPack)
