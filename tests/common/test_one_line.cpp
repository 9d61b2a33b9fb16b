// cks::one_line: what the CLI's error printer makes of any message (issue 18 defect 13).
#include <gtest/gtest.h>

#include "cks/common.hpp"

namespace cks {
namespace {

TEST(OneLine, EscapesControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(one_line("plain text"), "plain text");
  EXPECT_EQ(one_line("a\nb\r\nc\td"), "a\\nb\\r\\nc\\td");
  EXPECT_EQ(one_line(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(one_line("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(one_line("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(one_line("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // kept
  EXPECT_EQ(one_line("\xc3"), "\\xc3");                  // truncated sequence
  EXPECT_EQ(one_line("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // surrogate
  EXPECT_EQ(one_line("\xc2\x85"), "\\xc2\\x85");          // C1 control NEL
}

TEST(OneLine, CutsLongMessages) {
  const std::string long_message(10000, 'x');
  const std::string out = one_line(long_message, 100);
  EXPECT_EQ(out, std::string(100, 'x') + " ... (9900 more bytes)");
  EXPECT_EQ(one_line("\xe2\x82\xac\xe2\x82\xac", 4), "\xe2\x82\xac\xe2\x82\xac");  // whole characters only
  EXPECT_EQ(out.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace cks
