// Large host blocks kept, pages and all, from one case of a family to the next in a process. A
// case's first touch of fresh memory (the kernel zeroing every page) is not what any case measures,
// yet it cost more than the measuring in a process of one repetition: `run --processes 10` paid it
// ten times. Blocks are 2 MiB-aligned and advised to use transparent huge pages, as a fresh one
// would be; the pool keeps at most what the last cases gave back (a request no kept block fits
// grows the largest, keeping its touched pages), and is emptied when another family's case is set
// up (harness/measure.cpp). On a machine of several NUMA nodes nothing is kept: a page stays on the
// node of the thread that first touched it, and a one-thread case's pages would then serve an
// all-threads case.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace offloadbench {

inline constexpr std::size_t kHostBlockAlignment = std::size_t{2} << 20;

// Whether given-back blocks are kept (one NUMA node with memory).
bool host_blocks_are_kept();

class HostBlock {
 public:
  // At least `bytes` (rounded up to 2 MiB): the smallest kept block that fits, else the largest
  // kept one grown, else a fresh one (pages first touched by all threads where blocks are kept).
  // Its contents are whatever was left in it. Throws std::bad_alloc.
  explicit HostBlock(std::size_t bytes);
  ~HostBlock();  // back to the pool
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_;
  std::size_t bytes_;
};

// A case's array: 2 MiB and larger a HostBlock, smaller fresh from the heap at `small_alignment` (a
// power of two). Its contents are whatever was left in it. Throws std::bad_alloc.
class HostArray {
 public:
  HostArray(std::size_t bytes, std::size_t small_alignment);
  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // Whether every page was touched when it was made (a block where blocks are kept); else the first
  // write, by whichever threads make it, places the pages.
  bool pages_touched() const { return block_ && host_blocks_are_kept(); }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<HostBlock> block_;
  std::unique_ptr<void, Free> heap_;
  void* data_ = nullptr;
};

// A family's own thing to keep between its cases (a source buffer several cases read), under a
// name: kept until another is kept under that name or a case of another family is set up.
void keep_for_family(const std::string& name, std::shared_ptr<void> held);
std::shared_ptr<void> kept_for_family(const std::string& name);  // null: nothing kept

// Frees every kept block and everything kept for the family.
void release_kept_host_blocks();
// Bytes the pool keeps now (tests).
std::size_t kept_host_block_bytes();

}  // namespace offloadbench
