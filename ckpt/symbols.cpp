#include "ckpt/symbols.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {
namespace {

template <class T>
T read_at(const std::vector<char>& file, uint64_t offset, const std::string& path) {
  if (offset > file.size() || sizeof(T) > file.size() - offset)
    throw Error(path + ": truncated or corrupt ELF file");
  T v;
  std::memcpy(&v, file.data() + offset, sizeof v);
  return v;
}

}  // namespace

SymbolTable SymbolTable::load(const std::string& path, uint64_t load_base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  auto eh = read_at<Elf64_Ehdr>(file, 0, path);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) throw Error(path + ": not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) throw Error(path + ": not a 64-bit ELF file");
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) throw Error(path + ": not an executable");

  SymbolTable table;
  table.pie_ = eh.e_type == ET_DYN;
  uint64_t bias = table.pie_ ? (load_base ? load_base : kNoAslrPieBase) : 0;

  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw Error(path + ": unexpected section header size");
  std::vector<Elf64_Shdr> sections;
  for (uint16_t i = 0; i < eh.e_shnum; ++i)
    sections.push_back(read_at<Elf64_Shdr>(file, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), path));

  // The full symbol table when the file is not stripped, else the dynamic one.
  const Elf64_Shdr* symtab = nullptr;
  for (auto type : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (const auto& s : sections)
      if (s.sh_type == static_cast<uint32_t>(type)) symtab = &s;
    if (symtab) break;
  }
  if (!symtab) return table;
  if (symtab->sh_link >= sections.size()) throw Error(path + ": symbol table without strings");
  const Elf64_Shdr& strtab = sections[symtab->sh_link];

  uint64_t count = symtab->sh_entsize ? symtab->sh_size / symtab->sh_entsize : 0;
  for (uint64_t i = 0; i < count; ++i) {
    auto sym = read_at<Elf64_Sym>(file, symtab->sh_offset + i * sizeof(Elf64_Sym), path);
    unsigned type = ELF64_ST_TYPE(sym.st_info);
    bool object = type == STT_OBJECT || type == STT_COMMON;
    if ((!object && type != STT_FUNC) || sym.st_size == 0 || sym.st_shndx == SHN_UNDEF) continue;
    if (sym.st_name >= strtab.sh_size) continue;
    uint64_t name_at = strtab.sh_offset + sym.st_name;
    if (name_at >= file.size()) continue;
    size_t max_len = std::min<uint64_t>(file.size() - name_at, strtab.sh_size - sym.st_name);
    const char* name = file.data() + name_at;
    (object ? table.symbols_ : table.functions_)
        .push_back({std::string(name, strnlen(name, max_len)), sym.st_value + bias, sym.st_size});
  }
  for (auto* list : {&table.symbols_, &table.functions_})
    std::sort(list->begin(), list->end(), [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return table;
}

namespace {
const Symbol* holding(const std::vector<Symbol>& sorted, uint64_t address) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == sorted.begin()) return nullptr;
  --it;
  return address < it->address + it->size ? &*it : nullptr;
}
}  // namespace

const Symbol* SymbolTable::find_function(uint64_t address) const { return holding(functions_, address); }

const Symbol* SymbolTable::find(uint64_t address) const { return holding(symbols_, address); }

}  // namespace cape::ckpt
