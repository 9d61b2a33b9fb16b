// The LLM shape set: the GEMMs of one transformer layer of public models (data/shapes/
// llm_models.json), per tensor-parallel degree, per pass, over a decode-to-prefill token range.
//
// Layout mapping (D is column-major in this catalogue; activations X (tokens x in) and weights
// W (out x in) are row-major, gradients are stored like the tensors they differentiate):
//   fwd    Y  = X W^T     tn  M = tokens, N = out, K = in      (A = X K-major, B = W^T K-major)
//   dgrad  dX = dY W      nt  M = tokens, N = in,  K = out     (A = dY column-major, B = W row-major)
//   wgrad  dW = X^T dY    nn  M = in,     N = out, K = tokens  (A = X^T column-major, B = dY column-major)
// A row-major output is the transposed problem: D^T = B^T A^T swaps M and N and keeps tn and nt
// (and swaps nn with tt), so `cks shapes --set llm` lists one orientation per pass.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cks/common.hpp"
#include "cks/shapes.hpp"
#include "common/data_files.hpp"
#include "common/json_limits.hpp"

namespace fs = std::filesystem;

namespace cks {

namespace {

using json = nlohmann::json;

// The catalogue's operand alignment: 8 bf16 elements (16 bytes) along every dimension.
constexpr long kAlignment = 8;

struct LayerGemm {
  std::string name;
  long out, in;
};

enum class PassKind { fwd, dgrad, wgrad };
struct Pass {
  PassKind kind;
  const char* name;
  Layout layout;
};
constexpr Pass kPasses[] = {
    {PassKind::fwd, "fwd", Layout::tn}, {PassKind::dgrad, "dgrad", Layout::nt}, {PassKind::wgrad, "wgrad", Layout::nn}};

// (M, N, K) of a layer GEMM (in -> out features over `tokens` rows) in one pass (table above).
GemmShape pass_shape(PassKind pass, long tokens, long out, long in) {
  switch (pass) {
    case PassKind::fwd:
      return {tokens, out, in};
    case PassKind::dgrad:
      return {tokens, in, out};
    case PassKind::wgrad:
      return {in, out, tokens};
  }
  throw std::logic_error("pass_shape: unknown pass");
}

// An integer field >= `min`; the error names the file, model and field.
long count_field(const json& j, const char* key, const std::string& where, long min = 1) {
  if (!j.contains(key)) throw Error(where + ": missing '" + key + "'");
  const json& v = j.at(key);
  if (!v.is_number_integer() || v.get<long>() < min)
    throw Error(where + ": '" + key + "' must be an integer >= " + std::to_string(min));
  return v.get<long>();
}

// Attention GEMMs at TP degree `tp`; empty when tp does not divide the heads.
std::vector<LayerGemm> attention_gemms(const json& a, long hidden, long tp, const std::string& where) {
  const std::string type = a.value("type", "");
  const long heads = count_field(a, "heads", where);
  if (heads % tp != 0) return {};
  const long h = heads / tp;
  if (type == "gqa") {
    // K/V heads are split while TP divides them and replicated (one per rank) beyond.
    const long kv = count_field(a, "kv_heads", where), d = count_field(a, "head_dim", where);
    long kv_rank;
    if (kv % tp == 0)
      kv_rank = kv / tp;
    else if (tp % kv == 0)
      kv_rank = 1;
    else
      return {};
    return {{"qkv_proj", (h + 2 * kv_rank) * d, hidden}, {"o_proj", hidden, h * d}};
  }
  if (type == "mla") {
    // Multi-head latent attention: the low-rank down-projections are replicated, the per-head
    // up-projections and the output projection are split by heads.
    const long q_rank = count_field(a, "q_lora_rank", where), kv_rank = count_field(a, "kv_lora_rank", where);
    const long nope = count_field(a, "qk_nope_head_dim", where), rope = count_field(a, "qk_rope_head_dim", where);
    const long v = count_field(a, "v_head_dim", where);
    return {{"q_a_proj", q_rank, hidden},
            {"q_b_proj", h * (nope + rope), q_rank},
            {"kv_a_proj", kv_rank + rope, hidden},
            {"kv_b_proj", h * (nope + v), kv_rank},
            {"o_proj", hidden, h * v}};
  }
  throw Error(where + ": unknown attention type '" + type + "' (expected gqa or mla)");
}

// MLP GEMMs at TP degree `tp` (gate and up projections fused into one GEMM); empty when tp
// does not divide the intermediate size.
std::vector<LayerGemm> mlp_gemms(const json& m, long hidden, long tp, const std::string& where) {
  const std::string type = m.value("type", "");
  if (type == "dense") {
    const long inter = count_field(m, "intermediate", where);
    if (inter % tp != 0) return {};
    return {{"gate_up_proj", 2 * inter / tp, hidden}, {"down_proj", hidden, inter / tp}};
  }
  if (type == "moe") {
    const long experts = count_field(m, "experts", where), inter = count_field(m, "expert_intermediate", where);
    const long shared = m.contains("shared_experts") ? count_field(m, "shared_experts", where, 0) : 0;
    if (inter % tp != 0) return {};
    std::vector<LayerGemm> g{
        {"router", experts, hidden}, {"expert_gate_up", 2 * inter / tp, hidden}, {"expert_down", hidden, inter / tp}};
    if (shared > 0) {
      g.push_back({"shared_gate_up", 2 * shared * inter / tp, hidden});
      g.push_back({"shared_down", hidden, shared * inter / tp});
    }
    return g;
  }
  throw Error(where + ": unknown mlp type '" + type + "' (expected dense or moe)");
}

// A non-empty array of positive integers, each a multiple of `multiple_of`.
std::vector<long> positive_list(const json& root, const char* key, long multiple_of, const std::string& where) {
  if (!root.contains(key) || !root.at(key).is_array() || root.at(key).empty())
    throw Error(where + ": '" + key + "' must be a non-empty array");
  std::vector<long> out;
  for (const auto& v : root.at(key)) {
    if (!v.is_number_integer() || v.get<long>() <= 0 || v.get<long>() % multiple_of != 0)
      throw Error(where + ": '" + key + "' must hold positive multiples of " + std::to_string(multiple_of));
    out.push_back(v.get<long>());
  }
  return out;
}

}  // namespace

std::string llm_models_path(const std::string& file) {
  // $CKS_DATA_DIR, the installed share/cks, the source tree, a relocated build tree
  // (common/data_files.hpp).
  if (std::string p = find_data_file("shapes/" + file); !p.empty()) return p;
  throw Error("LLM model file shapes/" + file + " not found (set CKS_DATA_DIR to the repository's data/ folder)");
}

std::vector<ShapeGroup> make_llm_set(const std::string& models_path, uint64_t seed, const HardwareDesc& hw) {
  const std::string text = read_file_limited(models_path, "LLM model file", 64u << 20);
  json root;
  try {
    root = parse_json_limited(text, models_path);
  } catch (const Error& e) {
    throw Error("cannot parse " + std::string(e.what()));
  }
  const auto tokens = positive_list(root, "tokens", kAlignment, models_path);
  const auto tps = positive_list(root, "tp", 1, models_path);
  if (!root.contains("models") || !root.at("models").is_array())
    throw Error(models_path + ": 'models' must be an array");

  std::vector<ShapeGroup> out;
  std::map<std::string, size_t> index;  // group key -> position in out
  for (const auto& model : root.at("models")) {
    const std::string name = model.value("name", "");
    if (name.empty()) throw Error(models_path + ": a model has no 'name'");
    const std::string where = models_path + ": model '" + name + "'";
    const long hidden = count_field(model, "hidden", where);
    if (!model.contains("attention") || !model.contains("mlp") || !model.at("mlp").is_array())
      throw Error(where + ": needs an 'attention' object and an 'mlp' array");
    for (long tp : tps) {
      auto gemms = attention_gemms(model.at("attention"), hidden, tp, where);
      for (const auto& mlp : model.at("mlp")) {
        auto more = mlp_gemms(mlp, hidden, tp, where);
        gemms.insert(gemms.end(), more.begin(), more.end());
      }
      for (const auto& gemm : gemms) {
        // Only GEMMs whose operands meet the 16-byte alignment (e.g. not a 60-expert router).
        if (gemm.out % kAlignment != 0 || gemm.in % kAlignment != 0) continue;
        for (const auto& pass : kPasses) {
          const std::string source = name + ":" + gemm.name + ":" + pass.name + ":tp" + std::to_string(tp);
          for (long t : tokens) {
            const GemmShape s = pass_shape(pass.kind, t, gemm.out, gemm.in);
            const std::string key = group_key(s, pass.layout);
            if (auto it = index.find(key); it != index.end()) {
              out[it->second].detail += ";" + source;
              continue;
            }
            ShapeGroup g;
            g.shape = s;
            g.layout = pass.layout;
            g.construction = ShapeClass::llm;
            g.detail = source;
            g.tags = tags_for(s, hw);
            g.budget = auto_budget(g.tags);
            g.seed = seed;
            index.emplace(key, out.size());
            out.push_back(std::move(g));
          }
        }
      }
    }
  }
  return out;
}

}  // namespace cks
