// The CPU twins of the transfer family's kernels and the pointer-chase chain: the references the
// GPU cases check their output against (tests/test_gpu_transfer_extra.cpp holds the GPU side to
// them).
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

#include "kernels/copy_kernels.h"

namespace offloadbench {

TEST(CopyKernelsCpu, SumWordsIsTheExactIntegerSum) {
  std::vector<std::uint32_t> words(100000);
  std::iota(words.begin(), words.end(), 1u);
  std::uint64_t sum = 7;
  sum_words(&sum, words.data(), words.size());
  EXPECT_EQ(sum, 100000ull * 100001ull / 2);          // `=`, not `+=`
  std::vector<std::uint32_t> top(3000, 0xffffffffu);  // would overflow 32 bits after two words
  sum_words(&sum, top.data(), top.size());
  EXPECT_EQ(sum, 3000ull * 0xffffffffull);
  sum_words(&sum, top.data(), 0);
  EXPECT_EQ(sum, 0u);
}

TEST(CopyKernelsCpu, CopyBytesCopiesEveryByteOnly) {
  std::vector<unsigned char> src(1001), dst(1003, 0xee);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7);
  copy_bytes(dst.data() + 1, src.data(), src.size());
  EXPECT_EQ(dst[0], 0xee);
  EXPECT_EQ(dst[1002], 0xee);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 1));
}

namespace {
std::vector<std::uint64_t> chain(std::uint64_t nodes, std::uint64_t stride, unsigned seed) {
  std::vector<std::uint64_t> next(nodes);
  build_pointer_chase(next.data(), nodes, stride, seed);
  return next;
}
}  // namespace

TEST(PointerChase, OneCycleThroughEveryLineOnce) {
  const std::uint64_t stride = kChaseStrideSlots, lines = 4096;
  const auto next = chain(lines * stride, stride, 1);
  std::set<std::uint64_t> seen;
  std::uint64_t at = 0;
  for (std::uint64_t step = 0; step < lines; ++step) {
    EXPECT_EQ(at % stride, 0u) << "every visited slot starts a line";
    EXPECT_TRUE(seen.insert(at).second)
        << "slot " << at << " visited twice before the cycle closed";
    at = next[at];
  }
  EXPECT_EQ(at, 0u) << "after one visit per line the chase is back at slot 0";
  EXPECT_EQ(seen.size(), lines);
  for (std::uint64_t i = 0; i < next.size(); ++i)
    if (i % stride != 0) { EXPECT_EQ(next[i], i) << "slots off the cycle point at themselves"; }
}

TEST(PointerChase, OrderIsSeededAndNotSequential) {
  const std::uint64_t stride = 16, nodes = 16 * 2048;
  const auto a = chain(nodes, stride, 5), b = chain(nodes, stride, 5), c = chain(nodes, stride, 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // A sequential walk would step to the next line every time; a random cycle almost never does.
  int next_line = 0;
  for (std::uint64_t line = 0; line < nodes / stride; ++line)
    if (a[line * stride] == (line + 1) * stride) ++next_line;
  EXPECT_LT(next_line, 10);
}

TEST(PointerChase, CallsGoOnWhereTheLastStopped) {
  const auto next = chain(16 * 1000, 16, 3);
  std::uint64_t split = 0, whole = 0;
  pointer_chase(&split, next.data(), 123);
  EXPECT_NE(split, 0u);
  pointer_chase(&split, next.data(), 877);
  pointer_chase(&whole, next.data(), 1000);
  EXPECT_EQ(split, whole);
  EXPECT_EQ(whole, 0u) << "1000 lines: 1000 steps close the cycle";
}

TEST(PointerChase, RejectsALengthThatIsNotWholeLines) {
  std::vector<std::uint64_t> next(100);
  EXPECT_THROW(build_pointer_chase(next.data(), 100, 16, 1), std::invalid_argument);
  EXPECT_THROW(build_pointer_chase(next.data(), 0, 16, 1), std::invalid_argument);
  EXPECT_THROW(build_pointer_chase(next.data(), 100, 0, 1), std::invalid_argument);
  build_pointer_chase(next.data(), 16, 16, 1);  // one line: the cycle is slot 0 itself
  EXPECT_EQ(next[0], 0u);
}

}  // namespace offloadbench
