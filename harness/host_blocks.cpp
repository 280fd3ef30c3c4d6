#include "harness/host_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <new>
#include <string>
#include <utility>

#include "harness/numa.h"

namespace offloadbench {

namespace {
std::multimap<std::size_t, void*>& kept() {  // by size: lower_bound finds the smallest that fits
  static std::multimap<std::size_t, void*> blocks;
  return blocks;
}
std::map<std::string, std::shared_ptr<void>>& kept_things() {
  static std::map<std::string, std::shared_ptr<void>> things;
  return things;
}

// A 2 MiB-aligned private anonymous mapping of `bytes` (a multiple of the alignment), none of it
// touched.
void* map_aligned(std::size_t bytes) {
  const std::size_t span = bytes + kHostBlockAlignment;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const auto aligned =
      (start + kHostBlockAlignment - 1) / kHostBlockAlignment * kHostBlockAlignment;
  if (aligned > start) munmap(raw, aligned - start);
  if (const auto tail = start + span - (aligned + bytes); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  return reinterpret_cast<void*>(aligned);
}

// Every thread shares the first touch of [from, to) (one NUMA node: where a page lands does not
// matter).
void touch_pages(void* data, std::size_t from, std::size_t to) {
  auto* first = static_cast<unsigned char*>(data);
  const auto begin = static_cast<std::int64_t>(from / 4096),
             end = static_cast<std::int64_t>(to / 4096);
#pragma omp parallel for schedule(static)
  for (std::int64_t page = begin; page < end; ++page) first[page * 4096] = 0;
}

}  // namespace

HostBlock::HostBlock(std::size_t bytes) {
  bytes_ = (std::max<std::size_t>(bytes, 1) + kHostBlockAlignment - 1) / kHostBlockAlignment *
           kHostBlockAlignment;
  auto& blocks = kept();
  if (auto fit = blocks.lower_bound(bytes_); fit != blocks.end()) {
    bytes_ = fit->first;
    data_ = fit->second;
    blocks.erase(fit);
    return;
  }
  if (!blocks.empty()) {
    // None fits: the largest grows. mremap moves its touched pages to an aligned range of the new
    // size (page tables only, nothing copied or zeroed), so only the new part is touched for the
    // first time: a sweep's fp64 arrays then cost what they add to the fp32 ones before them, not
    // their whole size.
    const auto largest = std::prev(blocks.end());
    void* target = map_aligned(bytes_);
    void* moved =
        mremap(largest->second, largest->first, bytes_, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (moved != MAP_FAILED) {
      const std::size_t touched = largest->first;
      blocks.erase(largest);
      data_ = moved;
      madvise(data_, bytes_, MADV_HUGEPAGE);
      touch_pages(data_, touched, bytes_);
      return;
    }
    munmap(target, bytes_);
    release_kept_host_blocks();  // memory stays bounded by what the cases hold at once
  }
  data_ = map_aligned(bytes_);
  madvise(data_, bytes_, MADV_HUGEPAGE);  // advice only: failure is harmless
  if (host_blocks_are_kept())
    touch_pages(data_, 0, bytes_);  // else the case's own threads place its pages
}

HostBlock::~HostBlock() {
  if (host_blocks_are_kept())
    kept().emplace(bytes_, data_);
  else
    munmap(data_, bytes_);
}

HostArray::HostArray(std::size_t bytes, std::size_t small_alignment) {
  if (bytes >= kHostBlockAlignment) {
    block_ = std::make_unique<HostBlock>(bytes);
    data_ = block_->data();
    return;
  }
  const std::size_t rounded =
      (std::max<std::size_t>(bytes, 1) + small_alignment - 1) / small_alignment * small_alignment;
  heap_.reset(std::aligned_alloc(small_alignment, rounded));
  if (!heap_) throw std::bad_alloc();
  data_ = heap_.get();
}

void HostArray::Free::operator()(void* p) const { std::free(p); }

bool host_blocks_are_kept() {
  static const bool one_node = read_numa_topology().nodes_with_memory.size() <= 1;
  return one_node;
}

void keep_for_family(const std::string& name, std::shared_ptr<void> held) {
  auto& slot = kept_things()[name];
  slot.reset();  // the old one goes before the new one is kept
  slot = std::move(held);
}

std::shared_ptr<void> kept_for_family(const std::string& name) {
  const auto it = kept_things().find(name);
  return it == kept_things().end() ? nullptr : it->second;
}

void release_kept_host_blocks() {
  kept_things().clear();
  for (auto& [bytes, data] : kept()) munmap(data, bytes);
  kept().clear();
}

std::size_t kept_host_block_bytes() {
  std::size_t total = 0;
  for (const auto& block : kept()) total += block.first;
  return total;
}

}  // namespace offloadbench
