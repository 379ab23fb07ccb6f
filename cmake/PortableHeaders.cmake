# The portable build (cmake/PortableToolchain.cmake) compiles against Zig's glibc 2.17 headers.
# The header-only libraries it uses live in the host's /usr/include, beside the host's newer
# glibc headers, which must stay out of reach: each library's own folder is linked into a
# folder of the build tree, and that folder replaces /usr/include on the library's target.
set(_aml_headers ${PROJECT_BINARY_DIR}/portable-headers)
file(MAKE_DIRECTORY ${_aml_headers})
foreach(entry "nlohmann_json::nlohmann_json=nlohmann" "fmt::fmt-header-only=fmt")
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 target)
  list(GET entry 1 folder)
  get_target_property(_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(_found "")
  foreach(dir IN LISTS _dirs)
    if(EXISTS "${dir}/${folder}")
      set(_found "${dir}/${folder}")
      break()
    endif()
  endforeach()
  if(NOT _found)
    message(FATAL_ERROR "portable build: no ${folder}/ folder in ${target}'s include directories (${_dirs})")
  endif()
  file(CREATE_LINK "${_found}" "${_aml_headers}/${folder}" SYMBOLIC)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_aml_headers}")
endforeach()
