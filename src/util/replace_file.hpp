// A file's whole content replaced at once: readers (and a launcher killed halfway) see the old
// content or the new, never a truncated file.
#pragma once

#include <string>
#include <string_view>

namespace aml {

// Writes `content` to a temporary file beside `path` and renames it over `path`; where no
// file can be made beside it (a directory we may not write), writes `path` in place. False
// when neither works; errno says why.
bool replace_file(const std::string& path, std::string_view content);

}  // namespace aml
