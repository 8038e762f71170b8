// Names the variables a checkpoint's runs touch, from an executable's ELF symbol table
// (`cape ckpt dump --elf PROG`, and the race reports that name variables), and the
// functions that code addresses belong to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cape::ckpt {

// Where the kernel maps a position-independent executable when address randomisation is
// off (x86_64 ELF_ET_DYN_BASE): cape runs every program that way.
inline constexpr uint64_t kNoAslrPieBase = 0x555555554000;

struct Symbol {
  std::string name;
  uint64_t address = 0;  // run-time address
  uint64_t size = 0;
};

class SymbolTable {
 public:
  // Reads the data objects of `elf_path`. For a PIE, `load_base` is where it was mapped
  // (0: the no-randomisation default); it is ignored for a fixed-address executable.
  // Throws ckpt::Error naming the file when it is not a readable ELF64 file.
  static SymbolTable load(const std::string& elf_path, uint64_t load_base = 0);

  // The object holding `address`, or nullptr.
  const Symbol* find(uint64_t address) const;
  // The function holding code `address`, or nullptr (names places when there is no -g).
  const Symbol* find_function(uint64_t address) const;
  bool pie() const { return pie_; }
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<Symbol> symbols_;    // data objects, sorted by address
  std::vector<Symbol> functions_;  // functions, sorted by address
  bool pie_ = false;
};

}  // namespace cape::ckpt
