#include "backends/kubernetes/yaml.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace meridian::backends::k8s {

namespace {

using Json = nlohmann::ordered_json;

// Plain (unquoted) only when no YAML 1.1 or 1.2 reader could take the text
// for anything but this string: starts with a letter, '/' or '_' (so never a
// number, an indicator or a tag), keeps to letters, digits and "._/-", and is
// none of the words YAML 1.1 reads as a bool or null.
bool PlainSafe(const std::string& s) {
  if (s.empty()) return false;
  const char f = s.front();
  if (!(std::isalpha(static_cast<unsigned char>(f)) || f == '/' || f == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' ||
          c == '-')) {
      return false;
    }
  }
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::array<const char*, 11> kWords = {
      "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf"};
  return std::none_of(kWords.begin(), kWords.end(), [&](const char* w) { return lower == w; });
}

std::string Scalar(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return PlainSafe(s) ? s : v.dump(-1, ' ', false, Json::error_handler_t::strict);
  }
  return v.dump();  // numbers, bools, null
}

bool Inline(const Json& v) { return !v.is_structured() || v.empty(); }

std::string InlineText(const Json& v) {
  if (v.is_object() && v.empty()) return "{}";
  if (v.is_array() && v.empty()) return "[]";
  return Scalar(v);
}

void Emit(const Json& v, int indent, std::string* out);

void EmitObject(const Json& obj, int indent, std::string* out, bool first_inline) {
  bool first = true;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!(first && first_inline)) out->append(static_cast<size_t>(indent), ' ');
    first = false;
    out->append(Scalar(Json(it.key())));
    out->push_back(':');
    if (Inline(it.value())) {
      out->push_back(' ');
      out->append(InlineText(it.value()));
      out->push_back('\n');
    } else if (it.value().is_array()) {
      out->push_back('\n');
      Emit(it.value(), indent, out);  // sequences sit at the key's indent
    } else {
      out->push_back('\n');
      Emit(it.value(), indent + 2, out);
    }
  }
}

void Emit(const Json& v, int indent, std::string* out) {
  if (v.is_object()) {
    EmitObject(v, indent, out, false);
    return;
  }
  for (const Json& item : v) {  // an array
    out->append(static_cast<size_t>(indent), ' ');
    out->append("- ");
    if (Inline(item)) {
      out->append(InlineText(item));
      out->push_back('\n');
    } else if (item.is_object()) {
      EmitObject(item, indent + 2, out, true);
    } else {
      out->push_back('\n');
      Emit(item, indent + 2, out);
    }
  }
}

}  // namespace

std::string ToYaml(const Json& doc) {
  if (Inline(doc)) return InlineText(doc) + "\n";
  std::string out;
  Emit(doc, 0, &out);
  return out;
}

std::string ToYamlStream(const std::vector<Json>& docs) {
  std::string out;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i > 0) out += "---\n";
    out += ToYaml(docs[i]);
  }
  return out;
}

}  // namespace meridian::backends::k8s
