# ccache for the portable build, where CMAKE_<LANG>_COMPILER_LAUNCHER names it (scripts/test.sh
# sets it for each of its builds): README's pip install . and scripts/release.sh's x86_64 wheel
# compile the same sources with the same Zig, and the second takes the first's objects. ccache
# names a compiler by its file's time and size by default, and the zig-toolchain scripts
# (cmake/PortableToolchain.cmake) are new in every build tree: Zig's version names it instead.
# Paths inside the source tree are hashed relative to it, so two trees share objects where each
# builds in the same folder of its own (scripts/release.sh's -C build-dir).
execute_process(COMMAND "${AML_ZIG}" version OUTPUT_VARIABLE _aml_zig_version
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
foreach(_aml_lang C CXX)
  list(GET CMAKE_${_aml_lang}_COMPILER_LAUNCHER 0 _aml_launcher)
  if(_aml_launcher MATCHES "(^|/)ccache$")
    set(CMAKE_${_aml_lang}_COMPILER_LAUNCHER env "CCACHE_COMPILERCHECK=string:zig ${_aml_zig_version}"
        CCACHE_COMPILERTYPE=clang "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" ${CMAKE_${_aml_lang}_COMPILER_LAUNCHER})
  endif()
endforeach()
