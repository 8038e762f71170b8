// Fuzzes the DICKPT reader. The checksum is skipped so inputs reach the structural checks;
// whatever parses must be well formed, serialise again, re-parse to the same thing, and merge
// with itself (masked runs meeting masked runs: walked as pieces).
#include <cstdint>
#include <cstdlib>

#include "ckpt/format.h"
#include "ckpt/ops.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cape::ckpt;
  Checkpoint c;
  try {
    c = parse({data, size}, {.verify_checksum = false});
  } catch (const Error&) {
    return 0;
  }
  check_invariants(c);  // what the reader accepts is well formed (masked runs included)
  std::vector<uint8_t> again = serialize(c);
  Checkpoint d = parse(again);
  if (d.bytes != c.bytes || d.runs.size() != c.runs.size()) std::abort();
  try {
    merge(c, d);
  } catch (const Error&) {
    // e.g. reductions cut off their element boundaries: a clean error is fine
  }
  return 0;
}
