
namespace offloadbench {
namespace {

struct Counted {
  explicit Counted(int& made) { ++made; }
};

TEST(ReusedArrays, SameKeyReusesAnotherKeyRemakesAndForgetsChecks) {
  int made = 0;
  ReusedArrays<Counted> reuse;
  const auto make = [&] { return std::make_unique<Counted>(made); };
  Counted* first = &reuse.get("fp32/1024", make);
  reuse.set_checked("triad");
  EXPECT_EQ(&reuse.get("fp32/1024", make), first);
  EXPECT_EQ(made, 1);
  EXPECT_TRUE(reuse.checked("triad"));
  EXPECT_FALSE(reuse.checked("dot"));
  reuse.get("fp64/1024", make);
  EXPECT_EQ(made, 2);
  EXPECT_FALSE(reuse.checked("triad")) << "a check holds only for the arrays it ran on";
}

TEST(ReusedArrays, AFailedMakeLeavesNothingBehind) {
  ReusedArrays<int> reuse;
  EXPECT_THROW(reuse.get("a", []() -> std::unique_ptr<int> { throw std::runtime_error("no memory"); }),
               std::runtime_error);
  int made = 0;
  reuse.get("a", [&] { ++made; return std::make_unique<int>(1); });
  EXPECT_EQ(made, 1) << "the key of a failed make must not count as present";
}

}  // namespace
}  // namespace offloadbench
