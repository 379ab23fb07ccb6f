#pragma once

#include <string>

namespace aml {

// --help: the usage, every flag of the flag table, every variable aml-launch reads and sets,
// and the exit statuses.
std::string help_text();

}  // namespace aml
