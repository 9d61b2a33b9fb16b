#include <gtest/gtest.h>

#include <sstream>

#include "cks/common.hpp"

using namespace cks;

TEST(Table, CsvEscapesAndRoundTripsDoubles) {
  Table t({"a", "b", "c"});
  t.add_row({int64_t{1}, 0.1, std::string("x,\"y\"")});
  t.add_row({Cell{}, 2.5, std::string("z")});
  std::ostringstream os;
  t.write(os, Format::csv);
  EXPECT_EQ(os.str(), "a,b,c\n1,0.1,\"x,\"\"y\"\"\"\n,2.5,z\n");
}

TEST(Table, JsonAndMarkdown) {
  Table t({"k", "v"});
  t.add_row({std::string("n"), int64_t{3}});
  std::ostringstream j, m;
  t.write(j, Format::json);
  EXPECT_NE(j.str().find("\"v\": 3"), std::string::npos);
  t.write(m, Format::md);
  EXPECT_EQ(m.str(), "| k | v |\n| --- | --- |\n| n | 3 |\n");
}

TEST(Table, WidthMismatchThrows) {
  Table t({"a"});
  EXPECT_THROW(t.add_row({int64_t{1}, int64_t{2}}), std::logic_error);
}

TEST(Format, ParseRejectsUnknown) {
  EXPECT_EQ(parse_format("md"), Format::md);
  EXPECT_THROW(parse_format("xml"), Error);
}

TEST(Hash, Fnv1aIsStable) {
  EXPECT_EQ(hex64(fnv1a64("")), "cbf29ce484222325");
  EXPECT_EQ(hex64(fnv1a64("a")), "af63dc4c8601ec8c");
}
