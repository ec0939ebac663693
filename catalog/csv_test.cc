#include "catalog/csv.h"

#include <gtest/gtest.h>

namespace meridian::catalog {
namespace {

TEST(CsvTable, SkipsCommentsAndBlankLinesAndKeepsLineNumbers) {
  auto t = CsvTable::Parse("f.csv", "# generated\n\na,b\n1,2\n# note\n3,4\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows().size(), 2u);
  EXPECT_EQ(t->rows()[0].line, 4);
  EXPECT_EQ(t->rows()[1].line, 6);
  EXPECT_EQ(t->rows()[1].fields[1], "4");
}

TEST(CsvTable, QuotedFieldsHoldCommasQuotesAndCrlf) {
  auto t = CsvTable::Parse("f.csv", "a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rows()[0].fields[0], "x, y");
  EXPECT_EQ(t->rows()[0].fields[1], "say \"hi\"");
}

TEST(CsvTable, WrongColumnCountNamesFileAndLine) {
  auto t = CsvTable::Parse("offerings.csv", "# c\na,b,c\n1,2,3\n1,2\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "offerings.csv:4: expected 3 columns, found 2");
}

TEST(CsvTable, UnterminatedQuoteIsAnError) {
  auto t = CsvTable::Parse("f.csv", "a\n\"open\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "f.csv:2: unterminated quoted field");
}

TEST(CsvRecord, NumberErrorNamesFileLineColumnAndValue) {
  auto t = CsvTable::Parse("offerings.csv", "price,count\nabc,2.5\n");
  ASSERT_TRUE(t.ok());
  CsvRecord r(*t, t->rows()[0]);
  EXPECT_EQ(r.Number("price").status().message(),
            "offerings.csv:2: column price: \"abc\" is not a number");
  EXPECT_EQ(r.Integer("count").status().message(),
            "offerings.csv:2: column count: \"2.5\" is not a whole number");
}

TEST(CsvRecord, OptionalNumberTreatsEmptyAsAbsent) {
  auto t = CsvTable::Parse("f.csv", "a,b\n,1.25\n");
  ASSERT_TRUE(t.ok());
  CsvRecord r(*t, t->rows()[0]);
  EXPECT_FALSE(r.OptionalNumber("a")->has_value());
  EXPECT_DOUBLE_EQ(**r.OptionalNumber("b"), 1.25);
}

TEST(ParseDouble, RejectsTrailingCharactersAndNonFinite) {
  EXPECT_FALSE(ParseDouble("1.5x"));
  EXPECT_FALSE(ParseDouble(""));
  EXPECT_FALSE(ParseDouble("inf"));
  EXPECT_DOUBLE_EQ(*ParseDouble("-0.25"), -0.25);
}

}  // namespace
}  // namespace meridian::catalog
