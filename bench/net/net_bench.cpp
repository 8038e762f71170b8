// cape_bench_net: checkpoint transfer between two nodes on loopback beside raw TCP measured
// in the same run (goal: >= 80% of raw), and a broadcast to 3 slaves. Medians of 9 rounds.
// A checkpoint transfer counts everything the monitor waits for: serialize, frame checksum,
// TCP, checksum check and parse into a Checkpoint on the other side.
// Beside each rate, the CPU time both ends spent on one transfer (this process holds both):
// on a shared machine the rates follow the load of the moment, the CPU time much less, and
// it says what a transfer costs beyond raw TCP's copies (the tag, the node's own work).
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "ckpt/format.h"
#include "net/node.h"
#include "net/socket.h"

using namespace cape;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBytes = size_t{128} << 20;  // 128 MiB per transfer
constexpr int kRounds = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// CPU seconds of the whole process (every thread: both ends of a transfer) so far.
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// CPU milliseconds of the calling thread so far (one end of a transfer).
double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The CPU each end's thread spent, per transfer (the kernel's loopback work lands mostly on
// the sender's thread).
struct EndCpu {
  std::vector<double> send, recv;
};

// Runs f, adds the CPU milliseconds it took to `cpu`, returns f's result.
template <class F>
double timed_cpu(std::vector<double>& cpu, F&& f) {
  double c0 = cpu_seconds();
  double r = f();
  cpu.push_back((cpu_seconds() - c0) * 1e3);
  return r;
}

double gbps(size_t bytes, Clock::duration d) {
  return static_cast<double>(bytes) / std::chrono::duration<double>(d).count() / 1e9;
}

// A loopback connection kept for every round, as a node's is for the whole job: the kernel
// grows its buffers during the first transfers, so each kind is measured on a warmed
// connection (a fresh connection per round measured its warm-up, which a node's long-lived
// connections do not pay, and made raw TCP slower than it is beside a node).
struct Link {
  util::ScopedFd out, in;
  explicit Link(bool nonblocking) {
    util::ScopedFd l = net::listen_tcp("127.0.0.1", 0);
    out = net::connect_tcp({"127.0.0.1", net::local_port(l.get())}, std::chrono::seconds(5));
    in.reset(::accept(l.get(), nullptr, nullptr));
    if (nonblocking) {
      net::set_nonblocking(out.get());
      net::set_nonblocking(in.get());
    }
  }
  uint64_t seq = 0, last = 0;  // a sealed link's numbers
};

// Raw TCP: 1 MiB writes, the reader drains into a buffer. Both buffers are made and touched
// before the clock starts: the ceiling is the socket alone (a first touch of 128 MiB costs
// ~0.35 s on this VM, more than the transfer).
double raw_tcp_once(Link& k, EndCpu* ends = nullptr) {
  static std::vector<uint8_t> src(kBytes, 0x5a), dst(kBytes, 0);
  auto reader = std::async(std::launch::async, [&] {
    double c0 = thread_cpu_ms();
    size_t got = 0;
    while (got < kBytes) {
      ssize_t r = ::read(k.in.get(), dst.data() + got, std::min<size_t>(kBytes - got, 1 << 20));
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    if (ends) ends->recv.push_back(thread_cpu_ms() - c0);
    return Clock::now();
  });
  auto t0 = Clock::now();
  double c0 = thread_cpu_ms();
  size_t sent = 0;
  while (sent < kBytes) {
    ssize_t w = ::write(k.out.get(), src.data() + sent, std::min<size_t>(kBytes - sent, 1 << 20));
    if (w <= 0) break;
    sent += static_cast<size_t>(w);
  }
  if (ends) ends->send.push_back(thread_cpu_ms() - c0);
  return gbps(kBytes, reader.get() - t0);
}

// The transport alone: serialized checkpoint bytes in one frame (checksummed, writev; or
// sealed with a key as after the handshake: authenticated, or encrypted), read and verified
// on the other side, no serialize/parse.
double frame_once(Link& k, const std::vector<uint8_t>& bytes, bool keyed = false, bool encrypt = false,
                  EndCpu* ends = nullptr) {
  static const net::FrameKey key = [] {
    net::FrameKey kk{};
    kk[0] = 16;
    return kk;
  }();
  net::Seal seal = keyed ? net::Seal{&key, 1, ++k.seq, encrypt} : net::Seal{};
  auto reader = std::async(std::launch::async, [&] {
    static net::Frame f;  // its buffer reused, as a node's pool does
    double c0 = thread_cpu_ms();
    net::Unseal unseal = keyed ? net::Unseal{&key, 1, &k.last, nullptr, encrypt} : net::Unseal{};
    net::IoResult r =
        net::read_frame(k.in.get(), f, net::kDefaultMaxPayload, std::chrono::seconds(30), std::nullopt, unseal);
    if (!r.ok()) std::fprintf(stderr, "frame: %s\n", r.describe().c_str());
    if (ends) ends->recv.push_back(thread_cpu_ms() - c0);
    return Clock::now();
  });
  auto t0 = Clock::now();
  double c0 = thread_cpu_ms();
  iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  net::IoResult w = net::write_frame(k.out.get(), net::FrameType::checkpoint, {&v, 1}, std::chrono::seconds(30), seal);
  if (!w.ok()) std::fprintf(stderr, "frame: %s\n", w.describe().c_str());
  if (ends) ends->send.push_back(thread_cpu_ms() - c0);
  return gbps(bytes.size(), reader.get() - t0);
}

ckpt::Checkpoint big_checkpoint(const char* name) {
  ckpt::Checkpoint ck;
  ck.name = name;
  std::vector<uint8_t> data(kBytes, 0xa5);
  ck.append(0x7f0000000000, data, 1);
  return ck;
}

net::NodeOptions opts(int rank, int size, uint16_t port, const net::Secret& s, bool encrypt = false) {
  net::NodeOptions o;
  o.encrypt = encrypt;
  o.rank = rank;
  o.size = size;
  o.master = {"127.0.0.1", port};
  o.secret = s;
  o.timeout = std::chrono::seconds(30);
  return o;
}

// Master -> (size-1) slaves: send (size 2) or broadcast (size > 2); time until every slave
// holds the parsed checkpoint, in GB/s of checkpoint payload per slave. After each round,
// round 0 (the warm-up) too, the master runs `between` (a raw TCP transfer: each counted
// round has one just before and one just after it).
// Every frame is authenticated (Poly1305 tag); `encrypt` encrypts them too (AES-256-GCM).
std::vector<double> transfer(int size, const std::function<void()>& between, bool encrypt = false,
                             std::vector<double>* cpu = nullptr) {
  net::Secret s = net::Secret::generate();
  net::Node master(opts(0, size, 0, s, encrypt));
  std::vector<std::future<std::vector<Clock::time_point>>> slaves;
  for (int r = 1; r < size; ++r)
    slaves.push_back(std::async(std::launch::async, [&, r] {
      net::Node n(opts(r, size, master.port(), s));
      n.start();
      std::vector<Clock::time_point> done;
      for (int i = 0; i < kRounds + 1; ++i) {
        {
          ckpt::Checkpoint ck = n.receive("x");
          done.push_back(Clock::now());
        }  // done with it before asking for the next, as a slave is (its buffer goes back to the pool)
        ckpt::Checkpoint ack;
        ack.name = "ack";
        n.send(ack, 0);
      }
      n.program_exited(0);
      return done;
    }));
  master.start();
  ckpt::Checkpoint ck = big_checkpoint("x");
  std::vector<Clock::time_point> start;
  for (int i = 0; i < kRounds + 1; ++i) {  // round 0 warms the buffers and is not counted
    start.push_back(Clock::now());
    double c0 = cpu_seconds();
    if (size == 2) master.send(ck, 1);
    else master.broadcast(ck);
    for (int r = 1; r < size; ++r) master.receive("ack");
    if (i > 0 && cpu) cpu->push_back((cpu_seconds() - c0) * 1e3);
    between();
  }
  std::vector<std::vector<Clock::time_point>> done;
  for (auto& f : slaves) done.push_back(f.get());
  master.program_exited(0);
  std::vector<double> out;
  for (size_t i = 1; i < start.size(); ++i) {
    Clock::time_point last = start[i];
    for (auto& d : done) last = std::max(last, d[i]);
    out.push_back(gbps(kBytes, last - start[i]));
  }
  return out;
}

// Median of the per-round ratios a[i] / mean(raw[i], raw[i + 1]): each measured round
// against the raw TCP transfers just before and just after it, so that a raw transfer that
// follows one kind more than another cannot favour either.
double median_ratio(const std::vector<double>& a, const std::vector<double>& raw) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i + 1 < raw.size(); ++i) r.push_back(a[i] / ((raw[i] + raw[i + 1]) / 2));
  return median(r);
}

}  // namespace

int main() {
  // Every measured transfer has a raw TCP transfer just before and just after it, every kind
  // alike: the machine is shared, and a ratio means something only when both sides see the
  // same load. The figures are medians of kRounds rounds of per-round ratios.
  std::vector<uint8_t> bytes = ckpt::serialize(big_checkpoint("x"));
  Link raw_link(false), plain_link(true), sealed_link(true), crypted_link(true);
  for (int i = 0; i < 2; ++i) {  // warms the buffers, the connections and the pool
    raw_tcp_once(raw_link);
    frame_once(plain_link, bytes);
    frame_once(sealed_link, bytes, true);
    frame_once(crypted_link, bytes, true, true);
  }

  std::vector<double> frames, sealed, crypted, raw_fr;
  std::vector<double> cpu_raw, cpu_frame, cpu_sealed, cpu_one;
  EndCpu raw_ends, frame_ends, sealed_ends;
  // raw, frame, raw, sealed, raw, encrypted, raw, frame, ...: raw_fr[3i], [3i+1], [3i+2]
  // precede the round's three kinds, raw_fr[3i+1..3i+3] follow them.
  auto raw = [&] { return raw_tcp_once(raw_link, &raw_ends); };
  raw_fr.push_back(timed_cpu(cpu_raw, raw));
  for (int i = 0; i < kRounds; ++i) {
    frames.push_back(timed_cpu(cpu_frame, [&] { return frame_once(plain_link, bytes, false, false, &frame_ends); }));
    raw_fr.push_back(timed_cpu(cpu_raw, raw));
    sealed.push_back(timed_cpu(cpu_sealed, [&] { return frame_once(sealed_link, bytes, true, false, &sealed_ends); }));
    raw_fr.push_back(timed_cpu(cpu_raw, raw));
    crypted.push_back(frame_once(crypted_link, bytes, true, true));
    raw_fr.push_back(timed_cpu(cpu_raw, raw));
  }
  // Each kind's ratios against its own neighbours in raw_fr.
  auto ratio_at = [&](const std::vector<double>& kind, size_t slot) {
    std::vector<double> r;
    for (size_t i = 0; i < kind.size(); ++i) r.push_back(kind[i] / ((raw_fr[3 * i + slot] + raw_fr[3 * i + slot + 1]) / 2));
    return median(r);
  };
  std::vector<double> raw_1, raw_b, raw_e;
  std::vector<double> one = transfer(2, [&] { raw_1.push_back(raw_tcp_once(raw_link)); }, false, &cpu_one);
  std::vector<double> enc = transfer(2, [&] { raw_e.push_back(raw_tcp_once(raw_link)); }, true);
  std::vector<double> bc = transfer(4, [&] { raw_b.push_back(raw_tcp_once(raw_link)); });

  // serialize and parse on their own (not part of a transfer: send and receive use
  // serialize_parts and the in-place parse).
  std::vector<double> ser, par;
  ckpt::Checkpoint ck = big_checkpoint("x");
  for (int i = 0; i < kRounds; ++i) {
    auto t0 = Clock::now();
    std::vector<uint8_t> b = ckpt::serialize(ck);
    auto t1 = Clock::now();
    ckpt::Checkpoint back = ckpt::parse(b);
    auto t2 = Clock::now();
    ser.push_back(gbps(kBytes, t1 - t0));
    par.push_back(gbps(kBytes, t2 - t1));
  }

  std::printf("payload per transfer           %zu MiB, medians of %d rounds, each beside the raw TCP transfers\n"
              "                               just before and after it (one warmed connection per kind)\n",
              kBytes >> 20, kRounds);
  std::printf("raw TCP loopback               %6.2f GB/s (1 MiB writes into a warm buffer)\n", median(raw_1));
  std::printf("checkpoint master -> slave     %6.2f GB/s   %5.1f%% of raw (goal >= 80%%; Checkpoint to Checkpoint,\n"
              "                                                          every frame authenticated: Poly1305 tag)\n",
              median(one), 100 * median_ratio(one, raw_1));
  std::printf("  the same, --encrypt          %6.2f GB/s   %5.1f%% of raw (AES-256-GCM encryption)\n", median(enc),
              100 * median_ratio(enc, raw_e));
  std::printf("checkpoint frame (transport)   %6.2f GB/s   %5.1f%% of raw (a serialized file in one frame, checksummed\n"
              "                                                          as in the handshake: XXH3)\n",
              median(frames), 100 * ratio_at(frames, 0));
  std::printf("  the frame authenticated      %6.2f GB/s   %5.1f%% of raw (Poly1305 tag)\n", median(sealed),
              100 * ratio_at(sealed, 1));
  std::printf("  the frame encrypted          %6.2f GB/s   %5.1f%% of raw\n", median(crypted),
              100 * ratio_at(crypted, 2));
  std::printf("broadcast to 3 slaves          %6.2f GB/s per slave, %6.2f GB/s total (%.1f%% of raw)\n",
              median(bc), 3 * median(bc), 300 * median_ratio(bc, raw_b));
  std::printf("CPU time per transfer, both ends: raw TCP %.1f ms, frame (XXH3) %.1f ms, frame authenticated %.1f ms,\n"
              "                                checkpoint master -> slave (authenticated) %.1f ms (medians; raw over it: %.1f%%)\n",
              median(cpu_raw), median(cpu_frame), median(cpu_sealed), median(cpu_one),
              100 * median(cpu_raw) / median(cpu_one));
  std::printf("CPU time per transfer by end, sender / receiver thread: raw TCP %.1f / %.1f ms, frame (XXH3)\n"
              "                                %.1f / %.1f ms, frame authenticated %.1f / %.1f ms (medians)\n",
              median(raw_ends.send), median(raw_ends.recv), median(frame_ends.send), median(frame_ends.recv),
              median(sealed_ends.send), median(sealed_ends.recv));
  std::printf("ckpt::serialize / ckpt::parse  %6.2f / %.2f GB/s (copying into fresh buffers; not on the send path)\n",
              median(ser), median(par));
  return 0;
}
