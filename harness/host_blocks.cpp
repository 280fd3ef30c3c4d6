#include "harness/host_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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
}  // namespace

HostBlock::HostBlock(std::size_t bytes) {
  bytes_ = (std::max<std::size_t>(bytes, 1) + kHostBlockAlignment - 1) / kHostBlockAlignment * kHostBlockAlignment;
  auto& blocks = kept();
  if (auto fit = blocks.lower_bound(bytes_); fit != blocks.end()) {
    bytes_ = fit->first;
    data_ = fit->second;
    blocks.erase(fit);
    return;
  }
  release_kept_host_blocks();  // none fits: memory stays bounded by what the cases hold at once
  data_ = std::aligned_alloc(kHostBlockAlignment, bytes_);
  if (!data_) throw std::bad_alloc();
  madvise(data_, bytes_, MADV_HUGEPAGE);  // advice only: failure is harmless
  if (!host_blocks_are_kept()) return;     // the case's own threads place its pages
  // One NUMA node: where a page lands does not matter, so every thread shares its first touch.
  auto* first = static_cast<unsigned char*>(data_);
  const auto pages = static_cast<std::int64_t>(bytes_ / 4096);
#pragma omp parallel for schedule(static)
  for (std::int64_t page = 0; page < pages; ++page) first[page * 4096] = 0;
}

HostBlock::~HostBlock() {
  if (host_blocks_are_kept()) kept().emplace(bytes_, data_);
  else std::free(data_);
}

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
  for (auto& [bytes, data] : kept()) std::free(data);
  kept().clear();
}

std::size_t kept_host_block_bytes() {
  std::size_t total = 0;
  for (const auto& block : kept()) total += block.first;
  return total;
}

}  // namespace offloadbench
