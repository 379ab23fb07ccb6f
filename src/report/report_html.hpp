// The job's story as one self-contained HTML page (no network, inline SVG): its figures (the
// goodput) above a row per node along time, its phases as bars and its marks on them; rows
// where nothing happened folded into one, so that 1,024 nodes stay readable.
#pragma once

#include <string>

#include "report/job_story.hpp"

namespace aml {

// Rows shown one by one at most; beyond, quiet rows (no mark) fold into one.
inline constexpr std::size_t kRowsUnfolded = 24;

std::string report_html(const JobStory& story);

}  // namespace aml
