// `cape ckpt dump|stat|merge|diff|verify`: inspecting and combining DICKPT files.
// `dump --json` is a stable interface (docs/dickpt-format.md, "JSON"); scripts read it.
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/symbols.h"
#include "cli/ckpt_process.h"
#include "cli/command.h"
#include "util/error.h"
#include "util/text.h"

namespace cape::cli {
namespace {

std::string hex_addr(uint64_t v) { return ckpt::hex_address(v); }

std::string hex_bytes(std::span<const uint8_t> b) {
  static const char digits[] = "0123456789abcdef";
  std::string s(b.size() * 2, '0');
  for (size_t i = 0; i < b.size(); ++i) {
    s[2 * i] = digits[b[i] >> 4];
    s[2 * i + 1] = digits[b[i] & 15];
  }
  return s;
}

std::optional<ckpt::SymbolTable> load_symbols(const std::string& elf, const ckpt::Checkpoint& c, uint64_t base) {
  if (elf.empty()) return std::nullopt;
  return ckpt::SymbolTable::load(elf, c.load_base ? c.load_base : base);
}

std::string symbol_at(const std::optional<ckpt::SymbolTable>& syms, uint64_t address) {
  if (!syms) return "";
  const ckpt::Symbol* s = syms->find(address);
  if (!s) return "  ?";
  return "  " + s->name + (address == s->address ? "" : "+" + std::to_string(address - s->address));
}

// JSON lists memory, not the file's table: a masked run appears as its pieces (stretches of
// consecutive changed words), each marked "masked":true.
void dump_json(const ckpt::Checkpoint& c, const std::optional<ckpt::SymbolTable>& syms) {
  std::string out = "{\"version\":" + std::to_string(ckpt::format_version(c)) + ",\"kind\":\"" +
                    ckpt::to_string(c.kind) + "\",\"node\":" + std::to_string(c.node) +
                    ",\"sequence\":" + std::to_string(c.sequence) + ",\"timestamp\":" +
                    std::to_string(c.timestamp) + ",\"name\":" + util::json_quoted(c.name) +
                    ",\"load_base\":" + std::to_string(c.load_base);
  if (c.registers) out += ",\"registers\":\"" + hex_bytes(c.registers->bytes) + "\"";
  out += process_json(c);
  if (!c.mappings.empty()) {
    out += ",\"mappings\":[";
    for (size_t i = 0; i < c.mappings.size(); ++i) {
      const ckpt::MapChange& m = c.mappings[i];
      out += std::string(i ? ",{" : "{") + "\"start\":" + std::to_string(m.start) + ",\"end\":" +
             std::to_string(m.end) + ",\"kind\":\"" + ckpt::to_string(m.what) + "\",\"prot\":\"" +
             ckpt::prot_string(m.prot) + "\"}";
    }
    out += "]";
  }
  out += ",\"runs\":[";
  bool first = true;
  for (const ckpt::Run& r : c.runs)
    c.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> data) {
      out += first ? "{" : ",{";
      first = false;
      out += "\"address\":" + std::to_string(address) + ",\"length\":" + std::to_string(data.size()) +
             ",\"timestamp\":" + std::to_string(r.timestamp);
      if (r.masked()) out += ",\"masked\":true";
      if (r.reduction.active())
        out += std::string(",\"reduction\":{\"op\":\"") + ckpt::to_string(r.reduction.op) + "\",\"type\":\"" +
               ckpt::to_string(r.reduction.type) + "\"}";
      if (syms)
        if (const ckpt::Symbol* s = syms->find(address))
          out += ",\"symbol\":" + util::json_quoted(s->name) + ",\"offset\":" + std::to_string(address - s->address);
      out += ",\"data\":\"" + hex_bytes(data) + "\"}";
    });
  out += "]}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void dump(const ckpt::Checkpoint& c, const std::string& path, bool json,
          const std::optional<ckpt::SymbolTable>& syms, size_t preview) {
  if (json) return dump_json(c, syms);
  // The name is the file's content: escaped, so it cannot write to the terminal.
  std::printf("%s: DICKPT v%u %s checkpoint '%s'\n", path.c_str(), ckpt::format_version(c), ckpt::to_string(c.kind),
              util::printable(c.name).c_str());
  std::printf("  node %u, sequence %" PRIu64 ", timestamp %" PRIu64 ", load base %s, registers: %s\n", c.node,
              c.sequence, c.timestamp, hex_addr(c.load_base).c_str(),
              c.registers ? (std::to_string(c.registers->bytes.size()) + " bytes (x86_64)").c_str() : "none");
  print_process(c);
  for (const ckpt::MapChange& m : c.mappings)
    std::printf("  mapping %s-%s  %s %s\n", hex_addr(m.start).c_str(), hex_addr(m.end).c_str(),
                ckpt::to_string(m.what), ckpt::prot_string(m.prot).c_str());
  std::printf("  %zu runs, %" PRIu64 " bytes\n", c.runs.size(), c.memory_bytes());
  auto line = [&](const char* indent, uint64_t address, std::span<const uint8_t> data, const ckpt::Run& r) {
    std::string red = r.reduction.active()
                          ? std::string("  reduction(") + ckpt::to_string(r.reduction.op) + ":" +
                                ckpt::to_string(r.reduction.type) + ")"
                          : "";
    std::string bytes = hex_bytes(data.first(std::min<size_t>(data.size(), preview)));
    if (data.size() > preview) bytes += "...";
    std::printf("%s%s  %8zu B  t=%" PRIu64 "%s%s  %s\n", indent, hex_addr(address).c_str(), data.size(),
                r.timestamp, red.c_str(), symbol_at(syms, address).c_str(), bytes.c_str());
  };
  for (const ckpt::Run& r : c.runs) {
    if (!r.masked()) {
      line("  ", r.address, c.data(r), r);
      continue;
    }
    // A masked run: its span, then its pieces.
    size_t pieces = 0;
    c.for_each_piece(r, [&](uint64_t, std::span<const uint8_t>) { ++pieces; });
    std::printf("  %s  %8" PRIu64 " B  t=%" PRIu64 "  masked: %u words changed in %zu pieces%s\n",
                hex_addr(r.address).c_str(), r.length, r.timestamp, r.masked_words, pieces,
                symbol_at(syms, r.address).c_str());
    c.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> data) { line("    ", address, data, r); });
  }
}

void stat(const ckpt::Checkpoint& c, const std::string& path, uint64_t file_size) {
  uint64_t span = c.runs.empty() ? 0 : c.runs.back().end() - c.runs.front().address;
  uint64_t largest = 0, reductions = 0, masked = 0, memory = c.memory_bytes();
  for (const ckpt::Run& r : c.runs) {
    largest = std::max(largest, r.memory_bytes());
    reductions += r.reduction.active();
    masked += r.masked();
  }
  std::string runs = std::to_string(c.runs.size()) + " runs";
  if (masked) runs += " (" + std::to_string(masked) + " masked)";
  std::printf("%s: %s, %s, %" PRIu64 " bytes of data, file %" PRIu64 " bytes (%.1f%% overhead)\n",
              path.c_str(), ckpt::to_string(c.kind), runs.c_str(), memory, file_size,
              memory ? 100.0 * (double(file_size) - double(memory)) / double(memory) : 0.0);
  stat_process(c);
  if (!c.runs.empty())
    std::printf("  addresses %s..%s (%" PRIu64 " bytes), coverage %.2f%%, largest run %" PRIu64
                " bytes, mean %.1f, reduction runs %" PRIu64 "\n",
                hex_addr(c.runs.front().address).c_str(), hex_addr(c.runs.back().end()).c_str(), span,
                100.0 * double(memory) / double(span), largest, double(memory) / double(c.runs.size()), reductions);
}

uint64_t file_size_of(const std::string& path) {
  struct stat st;  // (not by opening it: a FIFO would block)
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

struct CkptArgs {
  std::vector<std::string> files;
  std::string output;
  std::string elf;
  std::string elf_base = "0";
  bool json = false;
  bool fail_on_conflict = false;
  size_t preview = 32;
};

uint64_t parse_address(const std::string& s) {
  try {
    size_t used = 0;
    uint64_t v = std::stoull(s, &used, 0);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  throw UserError("not an address: '" + s + "' (write it as 0x555555554000 or in decimal)");
}

}  // namespace

void add_ckpt_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<CkptArgs>();
  CLI::App* ck = app.add_subcommand("ckpt", "Inspect, verify, merge and diff DICKPT checkpoint files");
  ck->require_subcommand(1);

  CLI::App* d = ck->add_subcommand("dump", "Print a checkpoint (header and runs)");
  d->add_option("file", args->files, "checkpoint file")->required()->expected(1);
  d->add_flag("--json", args->json, "one JSON object (the stable interface, see docs/dickpt-format.md)");
  d->add_option("--elf", args->elf, "name the variable each run touches, from this executable's symbols");
  d->add_option("--elf-base", args->elf_base,
                "load address of a PIE when the checkpoint does not record it (default 0x555555554000)");
  d->add_option("--bytes", args->preview, "bytes of each run shown in text mode (default 32)");
  d->callback([args] {
    const std::string& path = args->files[0];
    ckpt::Checkpoint c = ckpt::read_file(path);
    dump(c, path, args->json, load_symbols(args->elf, c, parse_address(args->elf_base)), args->preview);
  });

  CLI::App* s = ck->add_subcommand("stat", "Runs, bytes and coverage of checkpoints");
  s->add_option("files", args->files, "checkpoint files")->required();
  s->callback([args] {
    for (const auto& path : args->files) {
      ckpt::Checkpoint c = ckpt::read_file(path);  // first: it refuses what is not a file
      stat(c, path, file_size_of(path));
    }
  });

  CLI::App* v = ck->add_subcommand("verify", "Check checkpoints for corruption; exit 1 if any is bad");
  v->add_option("files", args->files, "checkpoint files")->required();
  v->callback([args, &ctx] {
    for (const auto& path : args->files) {
      try {
        ckpt::Checkpoint c = ckpt::read_file(path);
        std::printf("%s: ok (%s, %zu runs, %" PRIu64 " bytes)\n", path.c_str(), ckpt::to_string(c.kind),
                    c.runs.size(), c.memory_bytes());
      } catch (const ckpt::Error& e) {
        std::fprintf(stderr, "cape: %s\n", e.what());
        ctx.exit_status = 1;
      }
    }
  });

  CLI::App* m = ck->add_subcommand(
      "merge", "Merge checkpoints left to right into one (the merge operator of Tran et al., SoICT 2018, Def. 4.4)");
  m->add_option("files", args->files, "checkpoint files (two or more)")->required()->expected(2, 1 << 20);
  m->add_option("-o,--output", args->output, "merged checkpoint file")->required();
  m->add_flag("--fail-on-conflict", args->fail_on_conflict,
              "fail (and write nothing) when two checkpoints write different values at one address and time");
  m->add_option("--elf", args->elf, "name the variables of conflicting addresses");
  m->callback([args] {
    ckpt::MergeOptions opt;
    opt.on_conflict = args->fail_on_conflict ? ckpt::OnConflict::fail : ckpt::OnConflict::keep_second;
    ckpt::Checkpoint acc = ckpt::read_file(args->files[0]);
    std::optional<ckpt::SymbolTable> syms = load_symbols(args->elf, acc, 0);
    for (size_t i = 1; i < args->files.size(); ++i) {
      ckpt::MergeResult r;
      try {
        r = ckpt::merge(acc, ckpt::read_file(args->files[i]), opt);
      } catch (const ckpt::Error& e) {
        throw UserError("merging " + args->files[i] + ": " + e.what());
      }
      for (const auto& c : r.conflicts) {
        std::string name;
        if (syms)
          if (const ckpt::Symbol* s = syms->find(c.address))
            name = " (" + s->name + "+" + std::to_string(c.address - s->address) + ")";
        std::fprintf(stderr, "cape: warning: conflicting writes at %s%s, %" PRIu64 " bytes, merging %s; kept %s's\n",
                     hex_addr(c.address).c_str(), name.c_str(), c.length, args->files[i].c_str(),
                     args->files[i].c_str());
      }
      acc = std::move(r.merged);
    }
    ckpt::write_file(acc, args->output);
  });

  CLI::App* df = ck->add_subcommand("diff", "The delta between two complete checkpoints (CAPE-1's diff)");
  df->add_option("files", args->files, "OLD NEW (complete checkpoints)")->required()->expected(2);
  df->add_option("-o,--output", args->output, "delta checkpoint file")->required();
  df->callback([args] {
    ckpt::Checkpoint a = ckpt::read_file(args->files[0]);
    ckpt::Checkpoint b = ckpt::read_file(args->files[1]);
    for (size_t i = 0; i < 2; ++i)
      if ((i ? b : a).kind != ckpt::Kind::complete)
        throw UserError(args->files[i] + ": is a " + ckpt::to_string((i ? b : a).kind) +
                        " checkpoint; diff compares two complete ones (use merge for deltas)");
    ckpt::write_file(ckpt::diff(a, b), args->output);
  });
}

}  // namespace cape::cli
