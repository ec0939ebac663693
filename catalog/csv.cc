#include "catalog/csv.h"

#include <charconv>
#include <cmath>

namespace meridian::catalog {

namespace {

// Splits one logical line starting at `pos` into fields; advances `pos` past
// the line end. Quoted fields may hold commas, doubled quotes and newlines.
Status SplitLine(std::string_view text, size_t& pos, int& line, std::vector<std::string>& out,
                 const std::string& file) {
  out.clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  const int start_line = line;
  while (pos < text.size()) {
    char c = text[pos++];
    if (quoted) {
      if (c == '"' && pos < text.size() && text[pos] == '"') {
        field.push_back('"');
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  if (quoted) {
    return Status::Invalid(file + ":" + std::to_string(start_line) + ": unterminated quoted field");
  }
  out.push_back(std::move(field));
  return Status::Ok();
}

bool IsSkippable(std::string_view text, size_t pos) {
  if (pos >= text.size()) return true;
  char c = text[pos];
  return c == '#' || c == '\n' || c == '\r';
}

void SkipLine(std::string_view text, size_t& pos) {
  size_t nl = text.find('\n', pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
}

}  // namespace

Result<CsvTable> CsvTable::Parse(std::string file, std::string_view text) {
  CsvTable t;
  t.file_ = std::move(file);
  size_t pos = 0;
  int line = 1;
  bool have_header = false;
  std::vector<std::string> fields;
  while (pos < text.size()) {
    if (IsSkippable(text, pos)) {
      SkipLine(text, pos);
      ++line;
      continue;
    }
    const int this_line = line;
    MERIDIAN_RETURN_IF_ERROR(SplitLine(text, pos, line, fields, t.file_));
    ++line;
    if (!have_header) {
      t.header_ = fields;
      have_header = true;
      continue;
    }
    if (fields.size() != t.header_.size()) {
      return Status::Invalid(t.file_ + ":" + std::to_string(this_line) + ": expected " +
                             std::to_string(t.header_.size()) + " columns, found " +
                             std::to_string(fields.size()));
    }
    t.rows_.push_back(CsvRow{this_line, fields});
  }
  if (!have_header) return Status::Invalid(t.file_ + ": no header line");
  return t;
}

int CsvTable::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Status CsvTable::RequireColumns(const std::vector<std::string_view>& names) const {
  for (std::string_view n : names) {
    if (ColumnIndex(n) < 0) {
      return Status::Invalid(file_ + ": header lacks column \"" + std::string(n) + "\"");
    }
  }
  return Status::Ok();
}

std::optional<double> ParseDouble(std::string_view s) {
  double v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int> ParseInt(std::string_view s) {
  int v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

const std::string& CsvRecord::Text(std::string_view column) const {
  static const std::string kEmpty;
  int i = table_.ColumnIndex(column);
  return i < 0 ? kEmpty : row_.fields[static_cast<size_t>(i)];
}

Status CsvRecord::Error(std::string_view column, const std::string& reason) const {
  return Status::Invalid(table_.file() + ":" + std::to_string(row_.line) + ": column " +
                         std::string(column) + ": " + reason);
}

Status CsvRecord::RowError(const std::string& reason) const {
  return Status::Invalid(table_.file() + ":" + std::to_string(row_.line) + ": " + reason);
}

Result<std::string> CsvRecord::NonEmpty(std::string_view column) const {
  const std::string& s = Text(column);
  if (s.empty()) return Error(column, "must not be empty");
  return s;
}

Result<double> CsvRecord::Number(std::string_view column) const {
  const std::string& s = Text(column);
  std::optional<double> v = ParseDouble(s);
  if (!v) return Error(column, "\"" + s + "\" is not a number");
  return *v;
}

Result<std::optional<double>> CsvRecord::OptionalNumber(std::string_view column) const {
  if (Text(column).empty()) return std::optional<double>();
  Result<double> v = Number(column);
  if (!v.ok()) return v.status();
  return std::optional<double>(*v);
}

Result<int> CsvRecord::Integer(std::string_view column) const {
  const std::string& s = Text(column);
  std::optional<int> v = ParseInt(s);
  if (!v) return Error(column, "\"" + s + "\" is not a whole number");
  return *v;
}

}  // namespace meridian::catalog
