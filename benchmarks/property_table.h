// The lookup behind the families' property tables (a variant's enum value → its row of properties):
// one row per value, and a value without a row is a programming error, not bad input.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace offloadbench {

// The row of `table` whose `key_field` equals `key`; throws std::logic_error naming `table_name` if
// none.
template <typename Row, std::size_t N, typename Key>
const Row& row_for(const Row (&table)[N], Key Row::*key_field, Key key, const char* table_name) {
  for (const auto& row : table)
    if (row.*key_field == key) return row;
  throw std::logic_error(std::string("a value without a row in ") + table_name);
}

}  // namespace offloadbench
