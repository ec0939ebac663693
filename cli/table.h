// Table: aligned plain-text columns for terminal output, the way `kubectl get`
// and `sinfo` print. Numbers are right-aligned, text left-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace meridian::cli {

class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kLeft;
  };

  explicit Table(std::vector<Column> columns);
  // A row must have one cell per column; missing cells print empty.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  void Print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point text: Fixed(3.14159, 2) == "3.14".
std::string Fixed(double value, int decimals);
// Engineering-style short form for large counts: 2.0e9 -> "2.00e9".
std::string Sci(double value);

}  // namespace meridian::cli
