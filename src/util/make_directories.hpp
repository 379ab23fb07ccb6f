// mkdir -p.
#pragma once

#include <string>

namespace aml {

// Makes the directory and every missing parent; false (errno set) when one cannot be made.
bool make_directories(const std::string& path);

}  // namespace aml
