#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/results/sizes.h"

namespace offloadbench {

TEST(ParseSize, AcceptsBinaryUnitsAndPlainBytes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("64Ki"), 65536u);
  EXPECT_EQ(parse_size("256MiB"), 256ull << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("16G"), 16ull << 30);  // above 4 GiB: sizes are 64-bit
}

TEST(ParseSize, RejectsMalformedZeroAndOverflow) {
  for (const char* bad : {"", "abc", "-4KiB", "4 KiB", "4KB", "4TiB", "1.5MiB", "0", "0MiB", "KiB",
                          "99999999999999999999", "17179869184GiB"}) {
    EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
  }
}

TEST(ParseSize, MessageNamesTheText) {
  try {
    parse_size("12XB");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'12XB'"), std::string::npos);
  }
}

TEST(ParseSizeList, SplitsOnCommasAndRejectsEmptyItems) {
  EXPECT_EQ(parse_size_list("4KiB,1MiB"), (std::vector<std::uint64_t>{4096, 1 << 20}));
  EXPECT_THROW(parse_size_list("4KiB,"), std::invalid_argument);
  EXPECT_THROW(parse_size_list(""), std::invalid_argument);
}

TEST(FormatSize, UsesTheLargestWholeUnit) {
  EXPECT_EQ(format_size(4096), "4KiB");
  EXPECT_EQ(format_size(256ull << 20), "256MiB");
  EXPECT_EQ(format_size(1ull << 30), "1GiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(1536), "1536B");
  EXPECT_EQ(parse_size(format_size(3ull << 30)), 3ull << 30);
}

TEST(PowersOfTwo, CoversTheRangeInclusive) {
  const auto sizes = powers_of_two(4096, 1ull << 30);
  EXPECT_EQ(sizes.size(), 19u);
  EXPECT_EQ(sizes.front(), 4096u);
  EXPECT_EQ(sizes.back(), 1ull << 30);
}

}  // namespace offloadbench
