#include "backends/kubernetes/names.h"

namespace meridian::backends::k8s {

namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Alnum(char c) { return LowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

std::string LabelRule(std::string_view s, bool letter_first) {
  const std::string rule =
      letter_first ? "must consist of lower case letters, digits or '-', start with a letter and "
                     "end with a letter or digit (RFC 1035 label)"
                   : "must consist of lower case letters, digits or '-', and start and end with a "
                     "letter or digit (RFC 1123 label)";
  if (s.empty()) return "is empty; a name " + rule;
  if (s.size() > kMaxLabelLength) {
    return "is " + std::to_string(s.size()) + " characters; at most 63 are allowed";
  }
  for (char c : s) {
    if (!LowerAlnum(c) && c != '-') return rule;
  }
  if (letter_first && !(s.front() >= 'a' && s.front() <= 'z')) return rule;
  if (!LowerAlnum(s.front()) || !LowerAlnum(s.back())) return rule;
  return "";
}

}  // namespace

std::string CheckDns1123Label(std::string_view s) { return LabelRule(s, false); }
std::string CheckDns1035Label(std::string_view s) { return LabelRule(s, true); }

std::string CheckDns1123Subdomain(std::string_view s) {
  if (s.size() > kMaxSubdomainLength) {
    return "is " + std::to_string(s.size()) + " characters; at most 253 are allowed";
  }
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || !LabelRule(part, false).empty()) {
      return "must consist of lower case letters, digits, '-' or '.', and start and end with a "
             "letter or digit (RFC 1123 subdomain)";
    }
    if (dot == std::string_view::npos) return "";
    start = dot + 1;
  }
}

std::string CheckLabelValue(std::string_view s) {
  if (s.empty()) return "";
  const std::string rule =
      "must be at most 63 characters of letters, digits, '-', '_' or '.', starting and ending "
      "with a letter or digit";
  if (s.size() > kMaxLabelLength) return rule;
  for (char c : s) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return rule;
  }
  if (!Alnum(s.front()) || !Alnum(s.back())) return rule;
  return "";
}

std::string CheckLabelKey(std::string_view s) {
  std::string_view name = s;
  size_t slash = s.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) return "has an empty prefix before '/'";
    if (std::string why = CheckDns1123Subdomain(prefix); !why.empty()) {
      return "has a prefix that " + why;
    }
  }
  if (name.empty()) return "has an empty name";
  if (std::string why = CheckLabelValue(name); !why.empty()) return "has a name that " + why;
  return "";
}

}  // namespace meridian::backends::k8s
