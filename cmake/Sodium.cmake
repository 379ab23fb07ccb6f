# libsodium, for the store's handshake (HMAC-SHA256, nonces, constant-time comparison): compiled
# here from a source tree (AML_SODIUM_SOURCE_DIR; the portable build fetches the pinned one:
# cmake/PinnedSources.cmake) with the build's own toolchain and linked in, so that the release
# needs glibc alone; or, in a build from source on Debian, Debian's libsodium-dev (static into
# executables, shared into shared libraries). Either way the project links the target `sodium`.
if(AML_SODIUM_SOURCE_DIR)
  set(_sodium ${AML_SODIUM_SOURCE_DIR}/src/libsodium)
  if(NOT EXISTS ${_sodium}/include/sodium.h OR NOT EXISTS ${_sodium}/include/sodium/version.h.in)
    message(FATAL_ERROR "AML_SODIUM_SOURCE_DIR=${AML_SODIUM_SOURCE_DIR}: expected a libsodium source tree (src/libsodium/include/sodium.h)")
  endif()
  file(GLOB_RECURSE _sodium_sources ${_sodium}/*.c)
  # sodium/version.h: what configure would write (a full build: not --enable-minimal).
  file(STRINGS ${AML_SODIUM_SOURCE_DIR}/configure.ac _sodium_init REGEX "^AC_INIT\\(")
  string(REGEX MATCH "\\[([0-9.]+)\\]" _ "${_sodium_init}")
  set(VERSION ${CMAKE_MATCH_1})
  file(STRINGS ${AML_SODIUM_SOURCE_DIR}/configure.ac _sodium_lib REGEX "^SODIUM_LIBRARY_VERSION_(MAJOR|MINOR)=")
  foreach(line IN LISTS _sodium_lib)
    string(REGEX MATCH "(MAJOR|MINOR)=([0-9]+)" _ "${line}")
    set(SODIUM_LIBRARY_VERSION_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endforeach()
  set(SODIUM_LIBRARY_MINIMAL_DEF "")
  configure_file(${_sodium}/include/sodium/version.h.in ${PROJECT_BINARY_DIR}/sodium-config/sodium/version.h @ONLY)
  add_library(sodium STATIC ${_sodium_sources})
  # Another project's sources, not written to be compiled a few together: one at a time.
  set_target_properties(sodium PROPERTIES UNITY_BUILD OFF)
  # sodium.h finds the generated sodium/version.h first; its "export.h" is in include/sodium.
  # Only the project's own code includes them: the package's users never do.
  target_include_directories(sodium SYSTEM PUBLIC $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/sodium-config>
                                                  $<BUILD_INTERFACE:${_sodium}/include>
                                                  $<BUILD_INTERFACE:${_sodium}/include/sodium>
                             PRIVATE ${PROJECT_BINARY_DIR}/sodium-config/sodium)  # its own "version.h"
  # No HAVE_* probes: the portable C implementations, and the random source by the getrandom
  # system call with /dev/urandom behind it (glibc 2.17 has no getrandom() wrapper).
  target_compile_definitions(sodium PRIVATE CONFIGURED=1 NATIVE_LITTLE_ENDIAN=1 SODIUM_STATIC=1)
  target_compile_definitions(sodium PUBLIC $<BUILD_INTERFACE:SODIUM_STATIC=1>)
  target_compile_options(sodium PRIVATE -w -fvisibility=hidden)  # its warnings are not this project's
  # Installed with aml::store, which a user's program links (cmake/Install.cmake), under a name
  # of its own beside any libsodium of the system.
  set_target_properties(sodium PROPERTIES C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON
                                          OUTPUT_NAME aml_sodium EXPORT_NAME sodium)
  message(STATUS "libsodium ${VERSION}: compiled from ${AML_SODIUM_SOURCE_DIR}")
else()
  # Executables (aml-launch, aml-preflight) take Debian's static archive and need glibc alone, as
  # the release does; a shared library (libaml_comm.so) cannot (the archive is not PIC) and
  # takes the shared one.
  find_path(SODIUM_INCLUDE_DIR sodium.h)
  find_library(SODIUM_LIBRARY NAMES sodium)
  find_library(SODIUM_STATIC_LIBRARY NAMES libsodium.a)
  if(NOT SODIUM_INCLUDE_DIR OR NOT SODIUM_LIBRARY OR NOT SODIUM_STATIC_LIBRARY)
    message(FATAL_ERROR "libsodium is needed (Debian: apt-get install libsodium-dev; "
                        "or -DAML_SODIUM_SOURCE_DIR=$(scripts/fetch-sodium.sh))")
  endif()
  add_library(sodium INTERFACE)
  set(_shared_kinds "SHARED_LIBRARY;MODULE_LIBRARY")
  target_link_libraries(sodium INTERFACE
    "$<IF:$<IN_LIST:$<TARGET_PROPERTY:TYPE>,${_shared_kinds}>,${SODIUM_LIBRARY},${SODIUM_STATIC_LIBRARY}>")
  target_include_directories(sodium SYSTEM INTERFACE $<BUILD_INTERFACE:${SODIUM_INCLUDE_DIR}>)
  message(STATUS "libsodium: ${SODIUM_LIBRARY}")
endif()
