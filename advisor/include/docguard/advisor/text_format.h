// Small number and text formatting shared by detectors and renderers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace docguard::advisor {

std::string with_commas(uint64_t value);    // 1234567 -> "1,234,567"
std::string human_bytes(uint64_t bytes);    // 2300786 -> "2.3 MB" (decimal units, as Atlas)
std::string human_duration_ms(int64_t ms);  // 3600000 -> "1 h"
std::string html_escape(std::string_view text);
// The inline style sheet of docguard's self-contained HTML reports (scan's, whatif's).
std::string_view html_report_style();
// Its page rules alone (body, headings, tables), for a report with classes of its own (replay's)
// to add them after.
std::string_view html_page_style();

}  // namespace docguard::advisor
