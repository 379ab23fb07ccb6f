# Installation: the launcher, the preflight, the headers and the libraries users link
# (aml::rank, aml::store, aml::comm) with a CMake package (find_package(AmlLaunch CONFIG)),
# a pkg-config file for the rank library, bash completion and the man page.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_aml_programs aml-launch)
set(_aml_libraries aml_rank aml_store aml_topology)
if(TARGET sodium)  # compiled here (cmake/Sodium.cmake): aml::store needs it installed beside it
  list(APPEND _aml_libraries sodium)
endif()
if(AML_BUILD_COMM)
  list(APPEND _aml_programs aml-preflight)
  list(APPEND _aml_libraries aml_comm)
  set_target_properties(aml_comm PROPERTIES EXPORT_NAME comm)
endif()
install(TARGETS ${_aml_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/aml DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set_target_properties(aml_rank PROPERTIES EXPORT_NAME rank)
set_target_properties(aml_store PROPERTIES EXPORT_NAME store)
set_target_properties(aml_topology PROPERTIES EXPORT_NAME topology)  # what aml::store links
install(TARGETS ${_aml_libraries}
        EXPORT AmlLaunchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(AML_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/AmlLaunch)
install(EXPORT AmlLaunchTargets NAMESPACE aml:: DESTINATION ${AML_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/AmlLaunchConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/AmlLaunchConfig.cmake
                              INSTALL_DESTINATION ${AML_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/AmlLaunchConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/AmlLaunchConfig.cmake
              ${PROJECT_BINARY_DIR}/AmlLaunchConfigVersion.cmake
        DESTINATION ${AML_CMAKE_DIR})

# Relocatable: the prefix is found from where the .pc file lies, so `cmake --install --prefix`
# and a .deb alike give right paths.
file(RELATIVE_PATH AML_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/aml-rank.pc.in ${PROJECT_BINARY_DIR}/aml-rank.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/aml-rank.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/aml-launch.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME aml-launch)

# The man page, from --help (help2man).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/aml-launch.1
                     COMMAND ${HELP2MAN} --no-info --section 1
                             --name "start and supervise the workers of a distributed training job"
                             --output ${PROJECT_BINARY_DIR}/aml-launch.1 $<TARGET_FILE:aml-launch>
                     DEPENDS aml-launch VERBATIM)
  add_custom_target(man-page ALL DEPENDS ${PROJECT_BINARY_DIR}/aml-launch.1)
  install(FILES ${PROJECT_BINARY_DIR}/aml-launch.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# A Debian package: cpack -G DEB in the build directory.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME aml-launch)
set(CPACK_PACKAGE_VENDOR "aml-launch")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Launcher and rank bootstrap for distributed training in containers")
set(CPACK_PACKAGE_CONTACT "aml-launch developers <aml-launch@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# aml-launch itself needs only glibc; aml::comm's backends are loaded from the machine's own
# Gloo, Open MPI and CUDA (the last one is not a Debian package, so no shlibdeps).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.36), libsodium23")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libgloo0, libopenmpi3")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
