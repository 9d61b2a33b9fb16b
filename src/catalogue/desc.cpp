// Names, canonical text and IDs of kernel descriptors and runtime knobs.
#include <charconv>
#include <cstring>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"

namespace cks {

namespace {
template <class E, size_t N>
E parse_enum(std::string_view s, const std::array<std::string_view, N>& names, const char* what) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  std::string known;
  for (auto n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error("unknown " + std::string(what) + " '" + std::string(s) + "' (expected " + known + ")");
}
constexpr std::array<std::string_view, 4> kLayoutNames{"tn", "nt", "nn", "tt"};
constexpr std::array<std::string_view, 3> kMainloopNames{"tma_ws", "pingpong", "cooperative"};
constexpr std::array<std::string_view, 3> kEpilogueNames{"tma_ws", "tma_ws_cooperative", "no_smem"};
constexpr std::array<std::string_view, 2> kSchedulerNames{"persistent", "stream_k"};
constexpr std::array<std::string_view, 3> kRasterNames{"h", "m", "n"};
constexpr std::array<std::string_view, 4> kDecompNames{"h", "dp", "sk", "streamk"};
constexpr std::array<std::string_view, 3> kRasterLong{"heuristic", "along_m", "along_n"};
constexpr std::array<std::string_view, 4> kDecompLong{"heuristic", "data_parallel", "split_k", "stream_k"};
constexpr std::array<std::string_view, 2> kReductionNames{"d", "n"};
constexpr std::array<std::string_view, 2> kReductionLong{"deterministic", "nondeterministic"};

int parse_int(std::string_view s, const char* what) {
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw Error(std::string("bad ") + what + " '" + std::string(s) + "'");
  return v;
}
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (true) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}
}  // namespace

std::string_view to_string(Layout l) { return kLayoutNames[static_cast<int>(l)]; }
Layout parse_layout(std::string_view s) {
  for (size_t i = 0; i < kLayoutNames.size(); ++i)
    if (kLayoutNames[i] == s) return static_cast<Layout>(i);
  throw Error("unknown layout '" + std::string(s) + "' (expected tn, nt, nn or tt)");
}
std::string_view to_string(MainloopSchedule s) { return kMainloopNames[static_cast<int>(s)]; }
std::string_view to_string(EpilogueSchedule s) { return kEpilogueNames[static_cast<int>(s)]; }
std::string_view to_string(TileSchedulerKind s) { return kSchedulerNames[static_cast<int>(s)]; }
std::string_view to_string(RasterOrder r) { return kRasterLong[static_cast<int>(r)]; }
std::string_view to_string(Decomposition d) { return kDecompLong[static_cast<int>(d)]; }
std::string_view to_string(Reduction r) { return kReductionLong[static_cast<int>(r)]; }
MainloopSchedule parse_mainloop(std::string_view s) {
  return parse_enum<MainloopSchedule>(s, kMainloopNames, "mainloop schedule");
}
EpilogueSchedule parse_epilogue(std::string_view s) {
  return parse_enum<EpilogueSchedule>(s, kEpilogueNames, "epilogue schedule");
}
TileSchedulerKind parse_scheduler(std::string_view s) {
  return parse_enum<TileSchedulerKind>(s, kSchedulerNames, "tile scheduler");
}

std::string kernel_axis_value(const KernelDesc& k, std::string_view axis) {
  if (axis == "tile_m") return std::to_string(k.tm);
  if (axis == "tile_n") return std::to_string(k.tn);
  if (axis == "tile_k") return std::to_string(k.tk);
  if (axis == "cluster") return std::to_string(k.cm) + "x" + std::to_string(k.cn);
  if (axis == "stages") return k.stages ? std::to_string(k.stages) : std::string("auto");
  if (axis == "mainloop") return std::string(to_string(k.mainloop));
  if (axis == "epilogue") return std::string(to_string(k.epilogue));
  if (axis == "scheduler") return std::string(to_string(k.scheduler));
  std::string known;
  for (auto a : kKernelAxes) known += (known.empty() ? "" : ", ") + std::string(a);
  throw Error("unknown kernel axis '" + std::string(axis) + "' (expected " + known + ")");
}

// "sm90_bf16_<layout>_<tm>x<tn>x<tk>_<cm>x<cn>x1_s<stages>_<mainloop>+<epilogue>+<scheduler>[+swap][+slicek]"
// The epilogue name may itself contain underscores, so it is separated by '+' instead.
std::string KernelDesc::canonical() const {
  // "sm90_bf16_<layout>_<tm>x<tn>x<tk>_<cm>x<cn>x1_s<stages>_<mainloop>+<epilogue>+<scheduler>",
  // written into one buffer (no temporaries: the catalogue builds 34,000 of them at start-up).
  char buf[160];
  char* p = buf;
  auto put = [&](std::string_view t) {
    std::memcpy(p, t.data(), t.size());
    p += t.size();
  };
  auto num = [&](int v) { p = std::to_chars(p, buf + sizeof buf, v).ptr; };
  put("sm90_bf16_");
  put(to_string(layout));
  put("_");
  num(tm);
  put("x");
  num(tn);
  put("x");
  num(tk);
  put("_");
  num(cm);
  put("x");
  num(cn);
  put("x1_s");
  num(stages);
  put("_");
  put(to_string(mainloop));
  put("+");
  put(to_string(epilogue));
  put("+");
  put(to_string(scheduler));
  if (swapped) put("+swap");
  if (sliced) put("+slicek");
  return std::string(buf, p);
}

std::string KernelDesc::sliced_unsupported() const {
  if (sliced) return "it is sliced-K already";
  if (epilogue != EpilogueSchedule::no_smem)
    return "sliced-K kernels store FP32 partials through the no-smem epilogue (this one has " +
           std::string(to_string(epilogue)) + ")";
  if (scheduler == TileSchedulerKind::stream_k) return "sliced-K kernels take the persistent or basic scheduler, not stream-K";
  return "";
}

KernelDesc KernelDesc::sliced_variant() const {
  if (const std::string why = sliced_unsupported(); !why.empty())
    throw Error("kernel " + canonical() + " has no sliced-K variant: " + why);
  KernelDesc k = *this;
  k.sliced = true;
  return k;
}

KernelDesc KernelDesc::unswapped() const {
  KernelDesc k = *this;
  k.layout = kernel_layout();
  k.swapped = false;
  return k;
}

KernelDesc KernelDesc::swapped_twin() const {
  if (swapped) throw Error("kernel " + canonical() + " is swapped already");
  KernelDesc k = *this;
  k.layout = swap_layout(layout);
  k.swapped = true;
  return k;
}

std::string KernelDesc::id() const { return "k" + hex64(fnv1a64(canonical())); }

KernelDesc KernelDesc::from_canonical(std::string_view s) {
  const std::string orig(s);
  auto bad = [&]() { return Error("malformed kernel descriptor '" + orig + "'"); };
  auto plus = split(s, '+');
  // Optional suffixes, in this order: "+swap", "+slicek".
  bool swapped = false, sliced = false;
  size_t suffixes = 3;
  if (plus.size() > suffixes && plus[suffixes] == "swap") swapped = true, ++suffixes;
  if (plus.size() > suffixes && plus[suffixes] == "slicek") sliced = true, ++suffixes;
  if (plus.size() < 3 || plus.size() != suffixes) throw bad();
  auto head = split(plus[0], '_');
  // sm90, bf16, layout, tile, cluster, sN, mainloop-words...
  if (head.size() < 7 || head[0] != "sm90" || head[1] != "bf16") throw bad();
  KernelDesc k;
  k.layout = parse_layout(head[2]);
  auto tile = split(head[3], 'x');
  auto cl = split(head[4], 'x');
  if (tile.size() != 3 || cl.size() != 3 || cl[2] != "1" || head[5].size() < 2 || head[5][0] != 's') throw bad();
  k.tm = parse_int(tile[0], "tile M");
  k.tn = parse_int(tile[1], "tile N");
  k.tk = parse_int(tile[2], "tile K");
  k.cm = parse_int(cl[0], "cluster M");
  k.cn = parse_int(cl[1], "cluster N");
  k.stages = parse_int(head[5].substr(1), "stages");
  std::string ml;
  for (size_t i = 6; i < head.size(); ++i) ml += (i > 6 ? "_" : "") + std::string(head[i]);
  k.mainloop = parse_mainloop(ml);
  k.epilogue = parse_epilogue(plus[1]);
  k.scheduler = parse_scheduler(plus[2]);
  k.swapped = swapped;
  if (sliced) {
    if (const std::string why = k.sliced_unsupported(); !why.empty())
      throw Error("malformed kernel descriptor '" + orig + "': " + why);
    k.sliced = true;
  }
  return k;
}

// "r=<h|m|n>,s=<swizzle>,d=<h|dp|sk|streamk>,k=<splits>[,x=n]" (x: the reduction, written only
// when nondeterministic; "x=d" is read too)
std::string RuntimeKnobs::canonical() const {
  return "r=" + std::string(kRasterNames[static_cast<int>(raster)]) + ",s=" + std::to_string(max_swizzle) +
         ",d=" + std::string(kDecompNames[static_cast<int>(decomposition)]) + ",k=" + std::to_string(splits) +
         (reduction == Reduction::deterministic ? "" : ",x=" + std::string(kReductionNames[static_cast<int>(reduction)]));
}

RuntimeKnobs RuntimeKnobs::from_canonical(std::string_view s) {
  RuntimeKnobs r;
  auto parts = split(s, ',');
  if (parts.size() != 4 && parts.size() != 5) throw Error("malformed runtime knobs '" + std::string(s) + "'");
  std::string seen;
  for (auto p : parts) {
    if (p.size() < 3 || p[1] != '=' || seen.find(p[0]) != std::string::npos)
      throw Error("malformed runtime knobs '" + std::string(s) + "'");
    seen += p[0];
    auto v = p.substr(2);
    switch (p[0]) {
      case 'r': r.raster = parse_enum<RasterOrder>(v, kRasterNames, "raster order"); break;
      case 's': r.max_swizzle = parse_int(v, "swizzle"); break;
      case 'd': r.decomposition = parse_enum<Decomposition>(v, kDecompNames, "decomposition"); break;
      case 'k': r.splits = parse_int(v, "splits"); break;
      case 'x': r.reduction = parse_enum<Reduction>(v, kReductionNames, "reduction"); break;
      default: throw Error("malformed runtime knobs '" + std::string(s) + "'");
    }
  }
  for (char c : std::string_view("rsdk"))
    if (seen.find(c) == std::string::npos) throw Error("malformed runtime knobs '" + std::string(s) + "'");
  return r;
}

}  // namespace cks
