# The portable build (pip install ., scripts/release.sh) compiles what it links from pinned
# sources and needs nothing of the host but Python and pip: each library's folder, unless given
# (-DVAR=DIR; pip: -C cmake.define.VAR=DIR), comes from its scripts/fetch-*.sh, which downloads
# it with pip, checks its SHA-256 and keeps it in ~/.cache/aml-launch.
# They are fetched before the toolchain's checks, so that a fetch that fails says so at once.
# aml_pinned_source(VAR SCRIPT WHAT) sets the cache entry VAR to the folder SCRIPT prints.
set(_aml_scripts_dir ${CMAKE_CURRENT_LIST_DIR}/../scripts)
function(aml_pinned_source var script what)
  if(${var})
    return()
  endif()
  # The build's own interpreter (scikit-build-core's), if it has pip (scripts/pinned_source.sh).
  set(python "")
  if(DEFINED Python_EXECUTABLE)
    set(python "${Python_EXECUTABLE}")
  endif()
  message(STATUS "${what}: fetching the pinned copy (scripts/${script})")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "AML_BUILD_PYTHON=${python}" bash ${_aml_scripts_dir}/${script}
                  RESULT_VARIABLE status OUTPUT_VARIABLE folder ERROR_VARIABLE errors
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0 OR NOT IS_DIRECTORY "${folder}")
    message(FATAL_ERROR "The portable build compiles ${what} from a pinned copy, and it could not "
                        "be fetched:\n${errors}\nWhere PyPI cannot be reached, run scripts/${script} "
                        "where it can and give the folder it prints: -D${var}=DIR "
                        "(pip: -C cmake.define.${var}=DIR).")
  endif()
  set(${var} "${folder}" CACHE PATH "${what} (scripts/${script})" FORCE)
endfunction()

aml_pinned_source(AML_JSON_INCLUDE_DIR fetch-json.sh "nlohmann_json 3.11.2")  # PortableHeaders
aml_pinned_source(AML_FMT_INCLUDE_DIR fetch-fmt.sh "fmt 11.1.2")
aml_pinned_source(AML_SODIUM_SOURCE_DIR fetch-sodium.sh "libsodium 1.0.18")  # Sodium
if(NOT DEFINED AML_BUILD_COMM OR AML_BUILD_COMM)  # CommDependencies
  aml_pinned_source(AML_GLOO_SOURCE_DIR fetch-gloo.sh "Gloo (Horovod 0.28.1's copy)")
endif()
