#include "cli/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace meridian::cli {
namespace {

TEST(Table, AlignsColumns) {
  Table t({{"GPU"}, {"N", Table::Align::kRight}, {"NOTE"}});
  t.AddRow({"H100-80GB", "8", "fast"});
  t.AddRow({"T4", "16", ""});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "GPU         N  NOTE\n"
            "H100-80GB   8  fast\n"
            "T4         16\n");
}

TEST(Table, FormatsNumbers) {
  EXPECT_EQ(Fixed(3.14159, 2), "3.14");
  EXPECT_EQ(Fixed(2.5, 0), "2");  // banker's rounding of printf: 2.5 -> "2"
  EXPECT_EQ(Sci(2.0e9), "2.00e9");
  EXPECT_EQ(Sci(3.5e-3), "3.50e-3");
}

}  // namespace
}  // namespace meridian::cli
