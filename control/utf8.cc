#include "control/utf8.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <vector>

#include "control/job_json.h"

namespace meridian::control {

std::optional<size_t> FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0, min = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      n = 1, cp = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      n = 2, cp = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      n = 3, cp = b & 0x07, min = 0x10000;
    } else {
      return i;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n + 1;
  }
  return std::nullopt;
}

namespace {

struct Frame {
  bool array = false;
  size_t index = 0;
  std::string key;
  bool at_key = true;  // an object's next string is a key
};

std::string PathOf(const std::vector<Frame>& frames, size_t depth) {
  std::string path;
  for (size_t i = 0; i < depth; ++i) {
    const Frame& f = frames[i];
    if (f.array) {
      path += "[" + std::to_string(f.index) + "]";
    } else {
      path += (path.empty() ? "" : ".") + f.key;
    }
  }
  return path;
}

}  // namespace

std::string JsonFieldAt(std::string_view text, size_t offset) {
  std::vector<Frame> frames;
  size_t i = 0;
  while (i < text.size() && i <= offset) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      frames.push_back(Frame{c == '[', 0, "", c == '{'});
    } else if ((c == '}' || c == ']') && !frames.empty()) {
      frames.pop_back();
    } else if (c == ',' && !frames.empty()) {
      if (frames.back().array) ++frames.back().index;
      else frames.back().at_key = true;
    } else if (c == ':' && !frames.empty()) {
      frames.back().at_key = false;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      const bool is_key = !frames.empty() && !frames.back().array && frames.back().at_key;
      if (offset <= end) {
        // A key names its object's field; a value, the field it is the value of.
        return PathOf(frames, is_key ? frames.size() - 1 : frames.size());
      }
      if (is_key) frames.back().key = std::string(text.substr(i + 1, end - i - 1));
      i = end;
    }
    ++i;
  }
  return "";
}

std::optional<std::string> NonUtf8Field(const nlohmann::json& tree) {
  if (tree.is_string()) {
    if (FirstInvalidUtf8(tree.get_ref<const std::string&>())) return std::string();
  } else if (tree.is_object()) {
    for (const auto& [k, v] : tree.items()) {
      if (FirstInvalidUtf8(k)) return std::string();
      if (auto inner = NonUtf8Field(v)) return k + (inner->empty() || (*inner)[0] == '[' ? "" : ".") + *inner;
    }
  } else if (tree.is_array()) {
    for (size_t i = 0; i < tree.size(); ++i) {
      if (auto inner = NonUtf8Field(tree[i])) {
        return "[" + std::to_string(i) + "]" + (inner->empty() || (*inner)[0] == '[' ? "" : ".") + *inner;
      }
    }
  }
  return std::nullopt;
}

Status CheckUtf8Body(std::string_view body, bool json) {
  const auto at = FirstInvalidUtf8(body);
  if (!at) return Status::Ok();
  std::string field;
  if (json) {
    field = JsonFieldAt(body, *at);
  } else {
    try {
      field = NonUtf8Field(YamlToJson(YAML::Load(std::string(body)))).value_or("");
    } catch (const YAML::Exception&) {
    }
  }
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(body[*at]));
  return Status::Invalid("request: " + (field.empty() ? std::string() : field + ": ") +
                         "invalid UTF-8 (byte " + byte + " at offset " + std::to_string(*at) +
                         "); the request must be UTF-8 text");
}

Status CheckJsonBody(std::string_view body) {
  MERIDIAN_RETURN_IF_ERROR(CheckUtf8Body(body, true));
  if (const size_t at = body.find('\0'); at != std::string_view::npos) {
    return Status::Invalid("request: malformed JSON: a NUL byte (0x00) at offset " +
                           std::to_string(at) + "; JSON allows one only escaped, as \\u0000");
  }
  return Status::Ok();
}

}  // namespace meridian::control
