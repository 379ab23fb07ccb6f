# What the wheel holds (pyproject.toml, scikit-build-core): the aml-launch and aml-preflight
# binaries as the wheel's scripts (pip puts them on the environment's PATH as they are, side by
# side: no Python between the user and the launcher, and --preflight finds its program), and
# the rank library inside the aml_launch package, which loads it with ctypes by its path.
# A wheel keeps no symbolic links: one file, without the version suffixes.
set_property(TARGET aml_rank PROPERTY VERSION)
set_property(TARGET aml_rank PROPERTY SOVERSION)
install(TARGETS aml-launch RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
if(AML_BUILD_COMM)
  install(TARGETS aml-preflight RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
endif()
install(TARGETS aml_rank LIBRARY DESTINATION aml_launch)
