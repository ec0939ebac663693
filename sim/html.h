// The pieces every self-contained report page shares (report.html of
// `simulate`, savings.html of `report savings`): the inline style sheet and
// how numbers, durations and shares read.
#pragma once

#include <optional>
#include <string>

namespace meridian::sim::html {

// `v` with `digits` decimals.
std::string Fmt(double v, int digits);
// "45 s", "12.5 min", "3.2 h", "4.1 d".
std::string Duration(double s);
// "42.0%", or "-" when unset.
std::string Pct(const std::optional<double>& v);
// "<!DOCTYPE html>...<body>" with `title` (escaped) and the style.
std::string PageHead(const std::string& title);

}  // namespace meridian::sim::html
