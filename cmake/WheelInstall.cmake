# What the wheel holds (pyproject.toml, scikit-build-core): the aml-launch binary as one of the
# wheel's scripts (pip puts it on the environment's PATH as it is: no Python between the user
# and the launcher), and the rank library inside the aml_launch package, which loads it with
# ctypes by its path. A wheel keeps no symbolic links: one file, without the version suffixes.
set_property(TARGET aml_rank PROPERTY VERSION)
set_property(TARGET aml_rank PROPERTY SOVERSION)
install(TARGETS aml-launch RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
install(TARGETS aml_rank LIBRARY DESTINATION aml_launch)
