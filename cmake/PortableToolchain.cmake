# The release toolchain: Zig's clang and libc++ against glibc 2.17's symbols, so that the
# binaries start in any x86_64 or aarch64 Linux with glibc 2.17 or newer (CentOS 7, Ubuntu
# 20.04, the Grace nodes' distributions, ...).
# libc++, libc++abi and libunwind are linked in statically; glibc stays dynamic (see DESIGN:
# its IFUNC'd memchr/memcpy carry the output relay, and its NSS resolves host names).
#
#   cmake -S . -B build-portable --toolchain cmake/PortableToolchain.cmake
#   cmake -S . -B build-aarch64 --toolchain cmake/PortableToolchain.cmake -DAML_PORTABLE_ARCH=aarch64
#
# AML_PORTABLE_ARCH (x86_64 or aarch64; this machine's by default) picks the target: Zig
# cross-compiles from either to either, with its own glibc 2.17 stubs for each.
# Zig comes from PyPI (`pip install ziglang`); AML_ZIG names another zig binary.
# The libraries it compiles in come from pinned copies (cmake/PinnedSources.cmake).
if(NOT AML_PORTABLE_ARCH)
  set(AML_PORTABLE_ARCH "${CMAKE_HOST_SYSTEM_PROCESSOR}")
endif()
if(NOT AML_PORTABLE_ARCH MATCHES "^(x86_64|aarch64)$")
  message(FATAL_ERROR "AML_PORTABLE_ARCH=${AML_PORTABLE_ARCH}: expected x86_64 or aarch64")
endif()
set(AML_PORTABLE_ARCH "${AML_PORTABLE_ARCH}" CACHE STRING "x86_64 or aarch64: the portable build's target")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${AML_PORTABLE_ARCH})
set(CMAKE_LIBRARY_ARCHITECTURE ${AML_PORTABLE_ARCH}-linux-gnu)
set(AML_PORTABLE_TARGET "${AML_PORTABLE_ARCH}-linux-gnu.2.17" CACHE STRING "Zig target of the portable build")

if(NOT AML_ZIG)
  if(DEFINED ENV{AML_ZIG})
    set(AML_ZIG "$ENV{AML_ZIG}")
  else()
    find_program(_aml_python NAMES python3 python)
    if(DEFINED Python_EXECUTABLE)  # scikit-build-core's interpreter (ziglang is a build requirement)
      set(_aml_python "${Python_EXECUTABLE}")
    endif()
    execute_process(
      COMMAND "${_aml_python}" -c "import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
      OUTPUT_VARIABLE AML_ZIG OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(NOT AML_ZIG OR NOT EXISTS "${AML_ZIG}")
    message(FATAL_ERROR "The portable build needs Zig: pip install ziglang (or set AML_ZIG)")
  endif()
  set(AML_ZIG "${AML_ZIG}" CACHE FILEPATH "The zig binary of the portable build")
endif()

# The compilers are two scripts in the build tree, zig-toolchain/zig-cc and zig-c++, that call
# `zig cc` and `zig c++`: a compiler launcher (ccache) takes a compiler, not a command with a
# subcommand. They hand Zig its own headers and libc++ through a link in the build tree
# (ZIG_LIB_DIR), which Zig names relative to the build tree: pip's isolated build environments
# put Zig somewhere new each time, and a compiler cache would otherwise see new headers in every
# build and share nothing between them (cmake/PortableCompilerCache.cmake). What Zig keeps of each
# compile (its output, and each preprocessed file a compiler cache asks for) goes to a cache in
# the build tree (ZIG_LOCAL_CACHE_DIR), gone with it: in Zig's own cache in ~/.cache/zig it was
# hundreds of megabytes a build that no later build read. libc++ and glibc's stubs stay there.
execute_process(COMMAND "${AML_ZIG}" env OUTPUT_VARIABLE _aml_zig_env ERROR_QUIET)
if(NOT _aml_zig_env MATCHES "lib_dir\"?[ :=]+\"([^\"]+)\"")  # zig env: JSON, or ZON since 0.15
  message(FATAL_ERROR "The portable build's Zig (${AML_ZIG}) did not say where its lib folder is (zig env)")
endif()
set(_aml_zig_wrappers "${CMAKE_BINARY_DIR}/zig-toolchain")
file(MAKE_DIRECTORY "${_aml_zig_wrappers}")
file(CREATE_LINK "${CMAKE_MATCH_1}" "${_aml_zig_wrappers}/lib" SYMBOLIC)
foreach(_aml_driver cc c++)
  file(WRITE "${_aml_zig_wrappers}/zig-${_aml_driver}"
       "#!/bin/sh\nZIG_LIB_DIR='${_aml_zig_wrappers}/lib' ZIG_LOCAL_CACHE_DIR='${_aml_zig_wrappers}/cache' exec '${AML_ZIG}' ${_aml_driver} \"$@\"\n")
  file(CHMOD "${_aml_zig_wrappers}/zig-${_aml_driver}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
       GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CMAKE_C_COMPILER "${_aml_zig_wrappers}/zig-cc")
set(CMAKE_C_COMPILER_ARG1 "-target ${AML_PORTABLE_TARGET}")
set(CMAKE_CXX_COMPILER "${_aml_zig_wrappers}/zig-c++")
set(CMAKE_CXX_COMPILER_ARG1 "-target ${AML_PORTABLE_TARGET}")

# The host's /usr/include is never searched: its glibc headers are newer than the glibc the
# binaries are linked against (cmake/PortableHeaders.cmake).
set(AML_PORTABLE ON CACHE BOOL "Portable (old glibc) build" FORCE)
