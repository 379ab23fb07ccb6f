# The portable build (cmake/PortableToolchain.cmake) compiles against Zig's glibc 2.17 headers:
# the host's /usr/include, whose glibc headers are newer, stays out of reach, and so do the
# host's header-only libraries. nlohmann_json and fmt come from pinned copies of their headers
# alone (cmake/PinnedSources.cmake), under the targets find_package would give.
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${AML_JSON_INCLUDE_DIR})
add_library(fmt::fmt-header-only INTERFACE IMPORTED)
target_include_directories(fmt::fmt-header-only SYSTEM INTERFACE ${AML_FMT_INCLUDE_DIR})
target_compile_definitions(fmt::fmt-header-only INTERFACE FMT_HEADER_ONLY=1)
