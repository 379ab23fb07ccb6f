#pragma once

namespace aml {

// The footer of --help: every variable aml-launch reads and sets, and the exit statuses.
extern const char* const kHelpFooter;

}  // namespace aml
