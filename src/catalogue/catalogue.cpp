// Enumeration of the catalogue: every statically valid kernel of one layout, in canonical order,
// and its candidates (kernel x runtime-knob setting).
#include <algorithm>
#include <mutex>

#include "catalogue/model.hpp"
#include "cks/common.hpp"

namespace cks {

namespace {

// The auto-stage kernel and the explicit stage counts 2..kMaxExplicitStages that are valid
// (they fit, and differ from the auto count: rules smem_capacity, duplicate_of_auto).
void add_stage_variants(KernelDesc k, const HardwareDesc& hw, std::vector<KernelDesc>& out) {
  auto add_if_valid = [&](int stages) {
    k.stages = stages;
    if (catalogue::first_violation(k, hw).rule.empty()) out.push_back(k);
  };
  add_if_valid(0);
  for (int s = 2; s <= catalogue::kMaxExplicitStages; ++s) add_if_valid(s);
}

}  // namespace

Catalogue Catalogue::build(Layout layout, const HardwareDesc& hw) {
  std::vector<KernelDesc> kernels;
  for (int tm : catalogue::kTileM)
    for (int tn = catalogue::kTileNMin; tn <= catalogue::kTileNMax; tn += catalogue::kTileNStep)
      for (int tk : catalogue::kTileK)
        for (auto c : catalogue::kClusterShapes)
          for (auto s : catalogue::kScheduleCombos) {
            KernelDesc k{layout, tm, tn, tk, c.m, c.n, 0, s.mainloop, s.epilogue, s.scheduler};
            if (catalogue::first_structural_violation(k, hw).rule.empty()) add_stage_variants(k, hw, kernels);
          }

  std::vector<std::pair<std::string, KernelDesc>> keyed;
  keyed.reserve(kernels.size());
  for (const auto& k : kernels) keyed.emplace_back(k.canonical(), k);
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  Catalogue cat;
  cat.layout_ = layout;
  cat.kernels_.reserve(keyed.size());
  cat.by_id_.reserve(keyed.size());
  for (const auto& entry : keyed) {
    const KernelDesc& k = entry.second;
    const auto index = static_cast<uint32_t>(cat.kernels_.size());
    cat.kernels_.push_back(k);
    std::string id(1, 'k');  // k.id(), from the canonical text already made
    id += hex64(fnv1a64(entry.first));
    cat.by_id_.emplace_back(std::move(id), index);
    for (const auto& knobs : knob_settings(k)) cat.candidates_.push_back({index, knobs});
  }
  std::sort(cat.by_id_.begin(), cat.by_id_.end());
  return cat;
}

const Catalogue& Catalogue::get(Layout layout) {
  static std::once_flag once[kLayouts.size()];
  static Catalogue cats[kLayouts.size()];
  const auto i = static_cast<size_t>(layout);
  std::call_once(once[i], [&] {
    Catalogue cat = build(layout, default_hw());
    // A preset whose resources fit no kernel would make every command see nothing and succeed.
    if (cat.kernels().empty())
      throw Error("no " + std::string(to_string(layout)) + " kernel fits hardware preset '" + default_hw().preset +
                  "' (its shared memory, registers, threads or cluster limits are below every kernel's needs)");
    cats[i] = std::move(cat);
  });
  return cats[i];
}

std::optional<uint32_t> Catalogue::find(std::string_view kernel_id) const {
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), kernel_id,
                             [](const auto& entry, std::string_view id) { return entry.first < id; });
  if (it == by_id_.end() || it->first != kernel_id) return std::nullopt;
  return it->second;
}

namespace {

// Sorted (ID, index) pairs of the kernels `make` derives from each kernel of `base` that `keep`
// admits: the lookup tables of the kernels no catalogue holds (swapped, sliced-K).
template <class Keep, class Make>
std::vector<std::pair<std::string, uint32_t>> derived_index(const Catalogue& base, Keep keep, Make make) {
  std::vector<std::pair<std::string, uint32_t>> index;
  for (uint32_t i = 0; i < base.kernels().size(); ++i)
    if (keep(base.kernels()[i])) index.emplace_back(make(base.kernels()[i]).id(), i);
  std::sort(index.begin(), index.end());
  return index;
}

std::optional<uint32_t> find_in(const std::vector<std::pair<std::string, uint32_t>>& index, std::string_view id) {
  auto it = std::lower_bound(index.begin(), index.end(), id,
                             [](const auto& entry, std::string_view key) { return entry.first < key; });
  if (it == index.end() || it->first != id) return std::nullopt;
  return it->second;
}

// The swapped kernels of `layout` (the twins of swap_layout(layout)'s catalogue) or, with
// `sliced`, the sliced-K variants of `layout`'s kernels and of those twins, by ID.
std::optional<KernelDesc> find_derived(Layout layout, std::string_view kernel_id, bool sliced) {
  static std::once_flag once[2][kLayouts.size()];
  static std::vector<std::pair<std::string, uint32_t>> index[2][kLayouts.size()][2];
  const auto l = static_cast<size_t>(layout);
  const Catalogue& own = Catalogue::get(layout);
  const Catalogue& other = Catalogue::get(swap_layout(layout));
  auto any = [](const KernelDesc&) { return true; };
  auto has_slice = [](const KernelDesc& k) { return k.sliced_unsupported().empty(); };
  std::call_once(once[sliced][l], [&] {
    if (!sliced) {
      index[0][l][1] = derived_index(other, any, [](const KernelDesc& k) { return k.swapped_twin(); });
    } else {
      index[1][l][0] = derived_index(own, has_slice, [](const KernelDesc& k) { return k.sliced_variant(); });
      index[1][l][1] =
          derived_index(other, has_slice, [](const KernelDesc& k) { return k.swapped_twin().sliced_variant(); });
    }
  });
  if (sliced)
    if (const auto i = find_in(index[1][l][0], kernel_id)) return own.kernels()[*i].sliced_variant();
  if (const auto i = find_in(index[sliced][l][1], kernel_id)) {
    const KernelDesc twin = other.kernels()[*i].swapped_twin();
    return sliced ? twin.sliced_variant() : twin;
  }
  return std::nullopt;
}

}  // namespace

std::optional<KernelDesc> find_kernel(Layout layout, std::string_view kernel_id) {
  const Catalogue& cat = Catalogue::get(layout);
  if (const auto i = cat.find(kernel_id)) return cat.kernels()[*i];
  if (auto k = find_derived(layout, kernel_id, false)) return k;
  return find_derived(layout, kernel_id, true);
}

std::optional<Candidate> Catalogue::find_candidate(std::string_view kernel_id, std::string_view knobs) const {
  const auto kernel = find(kernel_id);
  if (!kernel) return std::nullopt;
  try {
    return Candidate{*kernel, RuntimeKnobs::from_canonical(knobs)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace cks
