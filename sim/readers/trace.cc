// ReadTrace and ParseTraceFormat (sim/trace.h), and what the readers share.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "sim/readers/readers.h"
#include "sim/trace.h"

namespace meridian::sim {

int64_t SpecTable::Find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

uint32_t SpecTable::Add(const std::string& key, JobSpec spec) {
  const auto index = static_cast<uint32_t>(specs_->size());
  specs_->push_back(std::make_shared<const JobSpec>(std::move(spec)));
  index_.emplace(key, index);
  return index;
}

void ErrorList::Add(int64_t line, std::string_view field, std::string_view value,
                    std::string_view reason) {
  if (full()) {
    ++count_;
    return;
  }
  std::string m = source_ + ":" + std::to_string(line) + ": ";
  if (!field.empty()) m.append(field).append(": ");
  if (!value.empty()) m.append(value).append(" ");
  m.append(reason);
  AddRaw(std::move(m));
}

void ErrorList::AddRaw(std::string message) {
  ++count_;
  if (shown_.size() < kMaxShown) shown_.push_back(std::move(message));
}

Status ErrorList::ToStatus() const {
  if (count_ == 0) return Status::Ok();
  std::string m;
  for (const std::string& s : shown_) m += (m.empty() ? "" : "\n") + s;
  if (count_ > shown_.size()) {
    m += "\n" + source_ + ": " + WithThousands(static_cast<int64_t>(count_ - shown_.size())) +
         " more problems not shown";
  }
  return Status::Invalid(m);
}

std::string_view CatalogModelForAlibabaGpu(std::string_view alibaba) {
  // docs/trace-format.md, "GPU types": V100M16/V100M32/T4/A10 are the named
  // parts; P100 is not in the catalog (nearest: V100-16GB, its 16 GB HBM2
  // successor); G2 and G3 are undisclosed codes, mapped by their nodes' shape
  // (G1 appears in no file).
  static const std::pair<std::string_view, std::string_view> kMap[] = {
      {"V100M16", "V100-16GB"}, {"V100M32", "V100-32GB"}, {"T4", "T4"},
      {"A10", "A10"},           {"P100", "V100-16GB"},
      {"G2", "A100-40GB"},      {"G3", "A100-80GB"},
  };
  for (const auto& [from, to] : kMap) {
    if (from == alibaba) return to;
  }
  return {};
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the trace file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::NotFound(path + ": cannot read the trace file");
  return std::move(text).str();
}

void ForEachLine(std::string_view all, const std::function<bool(std::string_view, int64_t)>& line) {
  int64_t number = 0;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    std::string_view one = all.substr(start, end - start);
    start = end + 1;
    if (!one.empty() && one.back() == '\r') one.remove_suffix(1);
    if (!line(one, ++number)) return;
  }
}

std::string Lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const catalog::Catalog& catalog, const std::string& nodes_path) {
  TraceOptions options;
  options.nodes_path = nodes_path;
  return ReadTrace(path, format, catalog, options);
}

Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const catalog::Catalog& catalog, const TraceOptions& options) {
  Trace trace;
  trace.format = format;
  trace.source = path;
  Status s;
  switch (format) {
    case TraceFormat::kOpenb: s = ReadOpenb(path, options.nodes_path, catalog, trace); break;
    case TraceFormat::kDlrm: s = ReadDlrm(path, catalog, trace); break;
    case TraceFormat::kJsonl: s = ReadJsonl(path, catalog, trace); break;
    case TraceFormat::kSacct: s = ReadSacct(path, options, catalog, trace); break;
    case TraceFormat::kK8sJobs: s = ReadK8sJobs(path, options, catalog, trace); break;
  }
  if (!s.ok()) return s;
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  trace.notes.push_back(WithThousands(static_cast<int64_t>(trace.jobs.size())) + " jobs in " +
                        WithThousands(static_cast<int64_t>(trace.specs.size())) +
                        " distinct shapes");
  return trace;
}

Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const std::string& nodes_path) {
  static const Result<std::shared_ptr<const catalog::Catalog>> embedded =
      catalog::Catalog::LoadEmbedded();
  if (!embedded.ok()) return embedded.status();
  return ReadTrace(path, format, **embedded, nodes_path);
}

Result<TraceFormat> ParseTraceFormat(const std::string& name) {
  if (name == "openb") return TraceFormat::kOpenb;
  if (name == "dlrm") return TraceFormat::kDlrm;
  if (name == "jsonl") return TraceFormat::kJsonl;
  if (name == "sacct") return TraceFormat::kSacct;
  if (name == "k8s-jobs") return TraceFormat::kK8sJobs;
  return Status::Invalid("--format: \"" + name +
                         "\" is not a trace format; use openb, dlrm, jsonl, sacct or k8s-jobs");
}

}  // namespace meridian::sim
