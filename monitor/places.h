// Names places in the program for messages: where the current region's start() was called
// ("prog.c:12" through addr2line, "main+0x6b" without -g) and, through the executable's
// symbol table, the variables behind addresses (race reports).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ckpt/symbols.h"
#include "monitor/address_space.h"
#include "monitor/tracee.h"

namespace cape::monitor {

class Places {
 public:
  // start(): the call's return address, just below its frame `boundary` (0 if unreadable).
  void at_start(const Tracee& t, uint64_t boundary);
  // cape_region_begin("file:line"): the region's site as the translator named it, for this
  // region's start() calls ("" = none: they are looked up).
  void set_region_site(std::string where) { region_site_ = std::move(where); }
  // "file:line" of the current region: as the program named it, else of its start() call
  // (once per call site), "?" if unknown.
  std::string start_site(const AddressSpace& as);
  // The executable's symbols (loaded once; empty if it cannot be read).
  const ckpt::SymbolTable& symbols(const AddressSpace& as);

 private:
  std::string region_site_;
  uint64_t start_pc_ = 0;                  // return address of the region's start() call
  std::unique_ptr<ckpt::SymbolTable> symbols_;
  std::map<uint64_t, std::string> sites_;  // start() return address -> "file:line"
};

}  // namespace cape::monitor
