// The web dashboard (web/, docs/dashboard.md): the files of its Vite build,
// embedded into the binary by web/embed.cmake, so `meridian serve` serves it
// with no file system access and nothing loaded from another host.
#pragma once

#include <string_view>
#include <vector>

namespace meridian::control {

struct WebAsset {
  std::string_view path;          // "/index.html", "/assets/index-XXXX.js"
  std::string_view content_type;
  std::string_view body;
};

// Every built file (generated: build/web/web_assets.cc).
const std::vector<WebAsset>& WebAssets();
// The file at `path` exactly ("/" is "/index.html"); nullptr when there is none.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace meridian::control
