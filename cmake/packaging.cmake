# What `cmake --install` lays out beside bin/vigil and libexec/vigil/vigil-init (their own
# install() rules are in supervisor/ and observer/): the man pages, written in
# docs/man/, and the bash and zsh completions. And the .deb CPack builds from that
# (tools/package.sh), depending on Debian's package names.
include(GNUInstallDirs)
# Installing (and cpack) takes the binaries as built: tools/package.sh builds vigil and
# vigil-init first, and nothing else (the tests) needs building to be installed.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
file(GLOB VIGIL_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${VIGIL_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/completions/vigil.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME vigil)
install(FILES ${PROJECT_SOURCE_DIR}/completions/_vigil
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vigil)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "vigil maintainers <vigil@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "sandbox supervisor for AI coding agents (bubblewrap, seccomp, egress proxy)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# bwrap at run time; libseccomp and the C++ runtime for the binaries (where they are
# linked statically, the dependency is harmless).
# libssl3: vigil-export (syslog over TLS); vigil itself never loads it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap, libseccomp2, libstdc++6, libc6, libssl3")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
include(CPack)
