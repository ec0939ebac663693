#pragma once

#include <string_view>

namespace meridian::control {

// The web dashboard served at `/`: one self-contained HTML page (styles and
// script inline, no external network) that talks only to the /v1 API with a
// bearer token kept in the browser's sessionStorage.
std::string_view DashboardHtml();

}  // namespace meridian::control
