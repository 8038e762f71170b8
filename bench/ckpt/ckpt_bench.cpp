// diff, apply and merge throughput on 64 MiB images, beside memcpy measured in the same run
// (issue: diff and merge at >= 50% of memcpy bandwidth). All rates are bytes of *image* per
// second, so each operation is compared with copying the memory it describes.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "ckpt/ops.h"

namespace {

using cape::ckpt::Checkpoint;
constexpr size_t kImage = 64 << 20;
constexpr uint64_t kBase = 0x7f0000000000;

struct Fixture {
  std::vector<uint8_t> base, changed_a, changed_b;
  Checkpoint delta_a, delta_b;
};

// The image with `percent` of its 8-byte words changed at random; the words are dealt to two
// "slaves" a and b alternately in 64 KiB chunks (as a static schedule would), so their
// deltas are disjoint, like the parts wait_for merges.
const Fixture& fixture(int percent) {
  static std::map<int, Fixture> cache;
  auto it = cache.find(percent);
  if (it != cache.end()) return it->second;
  Fixture f;
  std::mt19937_64 rng(percent);
  f.base.resize(kImage);
  for (size_t i = 0; i < kImage; i += 8) {
    uint64_t v = rng();
    std::memcpy(&f.base[i], &v, 8);
  }
  f.changed_a = f.base;
  f.changed_b = f.base;
  std::bernoulli_distribution pick(percent / 100.0);
  for (size_t i = 0; i < kImage; i += 8) {
    if (!pick(rng)) continue;
    auto& img = (i / 65536) % 2 ? f.changed_b : f.changed_a;
    img[i] ^= 0x5a;
  }
  cape::ckpt::diff_into(f.delta_a, kBase, f.base, f.changed_a);
  cape::ckpt::diff_into(f.delta_b, kBase, f.base, f.changed_b);
  return cache.emplace(percent, std::move(f)).first->second;
}

void BM_memcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kImage, 1), dst(kImage, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kImage);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kImage);
}

void BM_diff(benchmark::State& state) {
  const Fixture& f = fixture(int(state.range(0)));
  // Both slaves' changes in one image: the whole changed fraction.
  std::vector<uint8_t> changed = f.changed_a;
  for (const auto& r : f.delta_b.runs)
    std::memcpy(&changed[r.address - kBase], f.delta_b.data(r).data(), r.length);
  size_t runs = 0;
  for (auto _ : state) {
    Checkpoint out;
    cape::ckpt::diff_into(out, kBase, f.base, changed);
    runs = out.runs.size();
    benchmark::DoNotOptimize(out.bytes.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kImage);
  state.counters["runs"] = double(runs);
}

void BM_apply(benchmark::State& state) {
  const Fixture& f = fixture(int(state.range(0)));
  Checkpoint image;
  image.kind = cape::ckpt::Kind::complete;
  image.append(kBase, f.base, 0);
  for (auto _ : state) {
    cape::ckpt::apply(f.delta_a, image);
    cape::ckpt::apply(f.delta_b, image);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kImage);
}

void BM_merge(benchmark::State& state) {
  const Fixture& f = fixture(int(state.range(0)));
  size_t runs = 0;
  for (auto _ : state) {
    auto r = cape::ckpt::merge(f.delta_a, f.delta_b);
    runs = r.merged.runs.size();
    benchmark::DoNotOptimize(r.merged.bytes.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kImage);
  state.counters["runs"] = double(runs);
  state.counters["delta_MiB"] = double(f.delta_a.payload_bytes() + f.delta_b.payload_bytes()) / (1 << 20);
}

BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_diff)->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_apply)->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_merge)->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);

// Prints, after the usual table, each operation's rate as a fraction of memcpy's.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("bytes_per_second");
      if (it != r.counters.end()) rates_.emplace_back(r.benchmark_name(), double(it->second));
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    double memcpy_rate = 0;
    for (auto& [name, rate] : rates_)
      if (name == "BM_memcpy") memcpy_rate = rate;
    if (memcpy_rate == 0) return;
    std::printf("\nimage bytes per second as a fraction of memcpy (%.2f GB/s), same run:\n", memcpy_rate / 1e9);
    for (auto& [name, rate] : rates_)
      std::printf("  %-16s %6.2f GB/s  %5.0f%% of memcpy\n", name.c_str(), rate / 1e9, 100.0 * rate / memcpy_rate);
  }

 private:
  std::vector<std::pair<std::string, double>> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
