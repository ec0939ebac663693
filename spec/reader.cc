#include "spec/reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <cstdlib>
#include <set>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "core/enums.h"
#include "core/time.h"
#include "spec/suggest.h"

namespace meridian::spec {

namespace {

// A plain decimal: [+-]digits[.digits][e[+-]digits]; no hex, inf or nan.
bool IsDecimal(const std::string& s) {
  size_t i = 0, n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp = 0;
    while (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp;
    if (exp == 0) return false;
  }
  return i == n;
}

std::string FormatBound(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string KindOf(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "nothing";
}

// Names become identifiers in the ledger and the control plane.
bool IsValidName(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string JoinPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string IndexPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

void SpecReader::BeginJob(std::string prefix,
                          std::map<std::string, std::pair<int, int>>* marks) {
  prefix_ = std::move(prefix);
  marks_ = marks;
}

std::string SpecReader::Position(const YAML::Mark& mark) const {
  if (mark.is_null()) return source_ + ": ";
  return source_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
         ": ";
}

void SpecReader::Error(const YAML::Node& at, const std::string& path, const std::string& message) {
  std::string full = prefix_.empty() ? path : (path.empty() ? prefix_ : prefix_ + "." + path);
  errors_.emplace_back(at.Mark().pos,
                       Position(at.Mark()) + (full.empty() ? "" : full + ": ") + message);
}

void SpecReader::FileError(const YAML::Mark& mark, const std::string& message) {
  errors_.emplace_back(mark.pos, Position(mark) + message);
}

Status SpecReader::ToStatus() const {
  if (errors_.empty()) return Status::Ok();
  // In file order, whichever check found them first.
  std::vector<std::pair<int, std::string>> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string joined;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) joined += "\n";
    joined += sorted[i].second;
  }
  return Status::Invalid(joined);
}

void SpecReader::Mark(const YAML::Node& node, const std::string& path) {
  if (marks_ == nullptr) return;
  YAML::Mark m = node.Mark();
  if (!m.is_null()) (*marks_)[path] = {m.line + 1, m.column + 1};
}

std::string SpecReader::Show(const YAML::Node& node) {
  if (node.IsScalar()) return "\"" + node.Scalar() + "\"";
  return KindOf(node);
}

bool SpecReader::ExpectMap(const YAML::Node& node, const std::string& path,
                           const std::vector<std::string>& known) {
  Mark(node, path);
  if (!node.IsMap()) {
    Error(node, path, Show(node) + " where a map of keys belongs (e.g. {key: value})");
    return false;
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (!kv.first.IsScalar()) {
      Error(kv.first, path, "a key must be a plain word, not " + KindOf(kv.first));
      continue;
    }
    if (!seen.insert(key).second) {
      Error(kv.first, JoinPath(path, key), "is given twice; keep one");
      continue;
    }
    bool is_known = false;
    for (const std::string& k : known) is_known = is_known || k == key;
    if (is_known) continue;
    std::string message = "unknown key \"" + key + "\"";
    std::vector<std::string> near = CloseMatches(key, known, 1);
    if (!near.empty()) {
      message += "; did you mean `" + near[0] + "`?";
    } else {
      message += "; known keys here: " + JoinAlternatives(known);
    }
    Error(kv.first, path.empty() ? key : JoinPath(path, key), message);
  }
  return true;
}

bool SpecReader::ExpectList(const YAML::Node& node, const std::string& path,
                            const std::string& example) {
  Mark(node, path);
  if (node.IsSequence()) return true;
  Error(node, path, Show(node) + " where a list belongs (e.g. " + example + ")");
  return false;
}

std::optional<std::string> SpecReader::String(const YAML::Node& node, const std::string& path) {
  Mark(node, path);
  if (!node.IsScalar()) {
    Error(node, path, KindOf(node) + " where a single value (text) belongs");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<double> SpecReader::Number(const YAML::Node& node, const std::string& path,
                                         NumberRange range) {
  Mark(node, path);
  const std::string want =
      std::string("a number ") + (range.exclusive ? "> " : ">= ") + FormatBound(range.min);
  if (!node.IsScalar()) {
    Error(node, path, KindOf(node) + " where " + want + " belongs");
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  if (!IsDecimal(text)) {
    Error(node, path, Show(node) + " is not a number; must be " + want);
    return std::nullopt;
  }
  double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v) || v < range.min || (range.exclusive && v == range.min)) {
    Error(node, path, Show(node) + " is out of range; must be " + want);
    return std::nullopt;
  }
  return v;
}

std::optional<int> SpecReader::WholeNumber(const YAML::Node& node, const std::string& path,
                                           int min) {
  Mark(node, path);
  const std::string want = "a whole number >= " + std::to_string(min);
  if (!node.IsScalar()) {
    Error(node, path, KindOf(node) + " where " + want + " belongs");
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  int v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min) {
    Error(node, path, Show(node) + " must be " + want);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> SpecReader::Bool(const YAML::Node& node, const std::string& path) {
  Mark(node, path);
  if (node.IsScalar()) {
    std::string t = node.Scalar();
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "true" || t == "yes") return true;
    if (t == "false" || t == "no") return false;
  }
  Error(node, path, Show(node) + " must be true or false");
  return std::nullopt;
}

std::optional<int64_t> SpecReader::Duration(const YAML::Node& node, const std::string& path,
                                            bool allow_zero) {
  Mark(node, path);
  if (!node.IsScalar()) {
    Error(node, path, KindOf(node) + " where a duration (e.g. 90m, 36h, 14d) belongs");
    return std::nullopt;
  }
  Result<int64_t> d = ParseDuration(node.Scalar());
  if (!d.ok()) {
    Error(node, path, d.status().message());
    return std::nullopt;
  }
  if (*d == 0 && !allow_zero) {
    Error(node, path, Show(node) + " must be longer than zero");
    return std::nullopt;
  }
  return *d;
}

std::optional<std::string> SpecReader::Name(const YAML::Node& node, const std::string& path) {
  std::optional<std::string> s = String(node, path);
  if (!s) return std::nullopt;
  if (!IsValidName(*s)) {
    Error(node, path, Show(node) +
                          " must be 1-63 letters, digits, '-', '_' or '.', starting with a letter "
                          "or digit");
    return std::nullopt;
  }
  return s;
}

std::vector<std::string> SpecReader::StringList(const YAML::Node& node, const std::string& path,
                                                const std::string& example) {
  std::vector<std::string> out;
  if (!ExpectList(node, path, example)) return out;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = IndexPath(path, i);
    std::optional<std::string> s = String(node[i], item_path);
    if (!s) continue;
    if (s->empty() || node[i].IsNull()) {
      Error(node[i], item_path, "is empty; give a value or remove the entry");
      continue;
    }
    out.push_back(*s);
  }
  return out;
}

std::map<std::string, std::string> SpecReader::StringMap(const YAML::Node& node,
                                                         const std::string& path) {
  std::map<std::string, std::string> out;
  Mark(node, path);
  if (!node.IsMap()) {
    Error(node, path, Show(node) + " where a map of names to values belongs (e.g. {A: b})");
    return out;
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      Error(kv.first, path, "a key must be a plain word, not " + KindOf(kv.first));
      continue;
    }
    const std::string key = kv.first.Scalar();
    const std::string item_path = JoinPath(path, key);
    if (out.count(key) > 0) {
      Error(kv.first, item_path, "is given twice; keep one");
      continue;
    }
    if (kv.second.IsNull()) {
      out[key] = "";
      Mark(kv.second, item_path);
      continue;
    }
    std::optional<std::string> v = String(kv.second, item_path);
    if (v) out[key] = *v;
  }
  return out;
}

namespace {

// Where each document of a YAML stream begins: the mark of its first node.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark&) override { pending_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { Node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(m);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& m) {
    if (pending_) starts.push_back(m);
    pending_ = false;
  }
  bool pending_ = false;
};

}  // namespace

// Not YAML::LoadAll: yaml-cpp 0.7 (Debian 12) never returns from it when the
// stream holds a token that cannot begin a node where one is expected (a
// top-level ",": jbeder/yaml-cpp#1040, fixed in LoadAll upstream by #1319).
// Its parser then reports one empty document after another at the same place
// without reading on. Here the parser is asked for three documents at most, a
// document that starts where the one before it did is that token, and the
// first document is read with YAML::Load (which reads one document only).
std::optional<YAML::Node> LoadOneDocument(SpecReader& r, std::string_view yaml,
                                          const std::string& empty_hint,
                                          const std::string& many_hint) {
  const std::string text(yaml);
  DocumentStarts docs;
  YAML::Node first;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (docs.starts.size() < 3 && parser.HandleNextDocument(docs)) {
    }
    for (size_t i = 1; i < docs.starts.size(); ++i) {
      if (docs.starts[i].pos != docs.starts[i - 1].pos) continue;
      const YAML::Mark& at = docs.starts[i];
      const bool shown = at.pos >= 0 && static_cast<size_t>(at.pos) < text.size();
      r.FileError(at, "malformed YAML: " +
                          (shown ? "\"" + text.substr(static_cast<size_t>(at.pos), 1) + "\""
                                 : std::string("a token")) +
                          " cannot begin a value here");
      return std::nullopt;
    }
    first = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    r.FileError(e.mark, "malformed YAML: " + e.msg);
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    r.FileError(e.mark, "cannot read YAML: " + e.msg);
    return std::nullopt;
  }
  if (docs.starts.empty() || first.IsNull()) {
    r.FileError(YAML::Mark::null_mark(), "is empty; " + empty_hint);
    return std::nullopt;
  }
  if (docs.starts.size() > 1) {
    r.FileError(docs.starts[1], "a second YAML document (---); " + many_hint);
    return std::nullopt;
  }
  return first;
}

Result<std::string> ReadSpecFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Invalid(path + ": cannot read: " + std::strerror(errno));
  return text.str();
}

std::string LocateInOrigin(const SpecOrigin& origin, const std::string& field) {
  std::string full = origin.path.empty() ? field
                     : field.empty()     ? origin.path
                                         : origin.path + "." + field;
  std::string probe = field;
  while (true) {
    auto it = origin.marks.find(probe);
    if (it != origin.marks.end()) {
      return origin.source + ":" + std::to_string(it->second.first) + ":" +
             std::to_string(it->second.second) + ": " + full;
    }
    if (probe.empty()) break;
    size_t cut = probe.find_last_of(".[");
    probe = cut == std::string::npos ? "" : probe.substr(0, cut);
  }
  return origin.source.empty() ? full : origin.source + ": " + full;
}

Status Findings::ToStatus() const {
  if (errors_.empty()) return Status::Ok();
  std::string joined;
  for (const std::string& e : errors_) joined += (joined.empty() ? "" : "\n") + e;
  return Status::Invalid(joined);
}

}  // namespace meridian::spec
