#include "util/printable.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp {
namespace {

TEST(PrintableTest, PlainAndUnicodeTextIsUnchanged) {
  EXPECT_EQ(printable("photos/2024 summer.jpg"), "photos/2024 summer.jpg");
  EXPECT_EQ(printable("r\xc3\xa9sum\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80"),
            "r\xc3\xa9sum\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80");
  EXPECT_EQ(printable(""), "");
}

TEST(PrintableTest, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;owned\x07"), "\\x1b[2J\\x1b]0;owned\\x07");
  EXPECT_EQ(printable(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
}

TEST(PrintableTest, BackslashIsEscapedSoEscapesAreUnambiguous) {
  EXPECT_EQ(printable("a\\x41"), "a\\\\x41");
  EXPECT_NE(printable("\\x41"), printable("\x41"));
}

TEST(PrintableTest, InvalidUtf8BytesAreEscaped) {
  EXPECT_EQ(printable("a\xff"), "a\\xff");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\x80x"), "\\x80x");                           // a lone continuation byte
}

TEST(PrintableTest, C1AndBidiControlsAreEscaped) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u{009b}31m");  // CSI
  EXPECT_EQ(printable("evil\xe2\x80\xaetxt.exe"), "evil\\u{202e}txt.exe");
  EXPECT_EQ(printable("\xe2\x81\xa6x"), "\\u{2066}x");
}

TEST(PrintableTest, ResultIsAlwaysValidUtf8WithoutControls) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) {
    every_byte += static_cast<char>(b);
    every_byte += "\xe2\x82";  // and a cut-off sequence after each
  }
  const std::string out = printable(every_byte);
  EXPECT_TRUE(is_valid_utf8(out));
  for (const char ch : out) {
    const auto b = static_cast<unsigned char>(ch);
    EXPECT_TRUE(b >= 0x20 && b != 0x7f) << static_cast<int>(b);
  }
}

TEST(PrintableTest, ValidatesUtf8) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("a\xff"));
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\x80"));  // overlong
  EXPECT_FALSE(is_valid_utf8("\xf0\x9f\x98"));  // truncated
}

}  // namespace
}  // namespace tinytcp
