// `aml-launch report [-o FILE] EVENTS...` (DESIGN §6b): the launchers' event files as one
// self-contained HTML page (report/report_html.hpp).
#pragma once

namespace aml {

// `args`: the words after "report". 0 written; 2 a usage error or a file that cannot be read.
int run_report(int argc, char** args);

}  // namespace aml
