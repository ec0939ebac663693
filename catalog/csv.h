// A small CSV reader for catalog files: RFC 4180 quoting, '#' comment lines
// and blank lines skipped, the first other line is the header. Every error
// names the file and the line ("offerings.csv:17: ...").
//
// A CsvTable owns its parsed fields; it is a value and safe to share once
// built.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace meridian::catalog {

struct CsvRow {
  int line = 0;  // 1-based line number in the file
  std::vector<std::string> fields;
};

class CsvTable {
 public:
  // Parses `text`; every row must have as many fields as the header.
  static Result<CsvTable> Parse(std::string file, std::string_view text);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRow>& rows() const { return rows_; }
  // Fails unless the header has every column of `names`.
  Status RequireColumns(const std::vector<std::string_view>& names) const;
  // Index of column `name`; -1 when absent.
  int ColumnIndex(std::string_view name) const;

 private:
  std::string file_;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

// Typed reads of one row, with errors naming file, line and column:
//   offerings.csv:17: column on_demand_usd_per_hour: "abc" is not a number
class CsvRecord {
 public:
  CsvRecord(const CsvTable& table, const CsvRow& row) : table_(table), row_(row) {}

  int line() const { return row_.line; }
  // The raw text of a column (the column must exist: RequireColumns first).
  const std::string& Text(std::string_view column) const;
  Result<std::string> NonEmpty(std::string_view column) const;
  Result<double> Number(std::string_view column) const;
  // Empty field -> nullopt.
  Result<std::optional<double>> OptionalNumber(std::string_view column) const;
  Result<int> Integer(std::string_view column) const;
  // "file:line: column C: reason".
  Status Error(std::string_view column, const std::string& reason) const;
  // "file:line: reason".
  Status RowError(const std::string& reason) const;

 private:
  const CsvTable& table_;
  const CsvRow& row_;
};

// Strict number parsing of a whole field (no trailing characters).
std::optional<double> ParseDouble(std::string_view s);
std::optional<int> ParseInt(std::string_view s);

}  // namespace meridian::catalog
