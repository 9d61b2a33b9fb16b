// The top-level error printer: exactly one line whatever the message holds (issue 18 defect 13).
#include <gtest/gtest.h>

#include "cli/cli_run.hpp"

namespace cks::test {
namespace {

TEST(CliErrorLine, EscapesNewlinesAndRawBytes) {
  const CliRun nl = run_cli({"catalogue", "show", "k\nsecond line"});
  ASSERT_TRUE(one_error_line(nl, "k\\nsecond line"));
  const CliRun bin = run_cli({"features", "--m", "8", "--n", "8", "--k", "8", "--layout", "\x01\xff\n"});
  ASSERT_TRUE(one_error_line(bin, "unknown layout '\\x01\\xff\\n'"));
  const CliRun esc = run_cli({"hw", "--preset", "\x1b[2J"});
  ASSERT_TRUE(one_error_line(esc, "\\x1b[2J"));
}

TEST(CliErrorLine, CutsVeryLongMessages) {
  const CliRun r = run_cli({"catalogue", "show", std::string(100000, 'z')});
  ASSERT_TRUE(one_error_line(r, "more bytes)"));
  EXPECT_LT(r.err.size(), 2200u);
}

TEST(CliErrorLine, ParseErrorsAreOneLineToo) {
  EXPECT_TRUE(one_error_line(run_cli({"features", "--no-such-option\nx"})));
  EXPECT_TRUE(one_error_line(run_cli({"no-such-command\n\n"})));
}

}  // namespace
}  // namespace cks::test
