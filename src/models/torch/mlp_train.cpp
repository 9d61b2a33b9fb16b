// Model B training plugin (libcks_mlp_torch.so): the MLP trained with libtorch's autodiff.
// Entry points and data layout: src/models/mlp_plugin.h. Losses (paper, Model B), per group g
// with scores s and targets y = T / T*_g:
//   mse                mean over rows of (s_i - y_i)^2
//   ranknet            mean over sampled pairs (i, j), y_i > y_j, of log(1 + exp(-(s_i - s_j)))
//   lambdarank-linear  the same pairs weighted by |dNDCG| (pairs.hpp) with gains g = y
//   lambdarank-exp     ... with gains g = 2^y - 1
// Pairs are resampled every epoch (cap per group, needle guarantee for the top 8). Mini-batches
// are whole groups, in a seeded shuffled order; Adam (AdamW with weight decay), optional dropout
// after each hidden ReLU. Deterministic for a seed and thread count.
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "models/mlp_plugin.h"
#include "models/pairs.hpp"

namespace {

using cks::models_detail::RankPair;


char* copy_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

torch::nn::Sequential make_net(int64_t width, const std::vector<int>& hidden, double dropout) {
  torch::nn::Sequential net;
  int64_t in = width;
  for (int h : hidden) {
    net->push_back(torch::nn::Linear(in, h));
    net->push_back(torch::nn::ReLU());
    if (dropout > 0) net->push_back(torch::nn::Dropout(dropout));  // training only: not exported
    in = h;
  }
  net->push_back(torch::nn::Linear(in, 1));
  return net;
}

nlohmann::json export_layers(torch::nn::Sequential& net) {
  nlohmann::json layers = nlohmann::json::array();
  for (auto& module : net->children()) {
    auto* linear = module->as<torch::nn::Linear>();
    if (!linear) continue;
    const torch::Tensor w = linear->weight.detach().contiguous();
    const torch::Tensor b = linear->bias.detach().contiguous();
    std::vector<std::vector<float>> rows(w.size(0), std::vector<float>(w.size(1)));
    for (int64_t r = 0; r < w.size(0); ++r)
      std::memcpy(rows[r].data(), w[r].data_ptr<float>(), sizeof(float) * w.size(1));
    layers.push_back({{"weight", rows}, {"bias", std::vector<float>(b.data_ptr<float>(), b.data_ptr<float>() + b.numel())}});
  }
  return {{"layers", layers}};
}

}  // namespace

extern "C" int cks_mlp_train(const float* z, uint64_t rows, uint64_t width, const float* y, const int32_t* grade,
                             const uint64_t* group_begin, uint64_t groups, const char* options_json,
                             void (*progress)(uint64_t, uint64_t), char** out_json) {
  try {
    const auto o = nlohmann::json::parse(options_json);
    const std::string objective = o.at("objective");
    const auto hidden = o.at("hidden").get<std::vector<int>>();
    const int epochs = o.at("epochs");
    const size_t pair_cap = o.at("pair_cap"), needle_top = o.at("needle_top");
    const uint64_t seed = o.at("seed");
    torch::manual_seed(seed);
    torch::set_num_threads(o.at("threads").get<int>());
    std::mt19937_64 rng(seed);

    const double dropout = o.value("dropout", 0.0), weight_decay = o.value("weight_decay", 0.0);
    const size_t batch_rows = o.value("batch_rows", size_t{2048});  // whole groups until this many rows
    auto net = make_net(static_cast<int64_t>(width), hidden, dropout);
    net->train();
    const double lr = o.at("learning_rate").get<double>();
    // Adam (the default, as before) or, with weight decay, AdamW (decoupled decay).
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    if (weight_decay > 0) {
      optimizer = std::make_unique<torch::optim::AdamW>(net->parameters(), torch::optim::AdamWOptions(lr).weight_decay(weight_decay));
    } else {
      optimizer = std::make_unique<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(lr));
    }
    torch::optim::Optimizer& adam = *optimizer;
    const torch::Tensor all_z = torch::from_blob(const_cast<float*>(z), {int64_t(rows), int64_t(width)}, torch::kFloat32);
    const torch::Tensor all_y = torch::from_blob(const_cast<float*>(y), {int64_t(rows)}, torch::kFloat32);
    const bool pairwise = objective != "mse";
    const bool lambda = objective.rfind("lambdarank", 0) == 0;
    const bool exponential = objective == "lambdarank-exp";

    std::vector<uint64_t> order(groups);
    for (uint64_t g = 0; g < groups; ++g) order[g] = g;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t next = 0; next < order.size();) {
        // Mini-batch: whole groups until batch_rows rows.
        std::vector<uint64_t> batch;
        size_t rows_in_batch = 0;
        while (next < order.size() && (batch.empty() || rows_in_batch < batch_rows)) {
          batch.push_back(order[next]);
          rows_in_batch += group_begin[order[next] + 1] - group_begin[order[next]];
          ++next;
        }
        std::vector<torch::Tensor> zs, ys;
        for (uint64_t g : batch) {
          zs.push_back(all_z.slice(0, group_begin[g], group_begin[g + 1]));
          ys.push_back(all_y.slice(0, group_begin[g], group_begin[g + 1]));
        }
        const torch::Tensor s = net->forward(torch::cat(zs)).squeeze(1);
        torch::Tensor loss;
        if (!pairwise) {
          loss = (s - torch::cat(ys)).pow(2).mean();
        } else {
          std::vector<int64_t> hi, lo;
          std::vector<float> weight;
          const torch::Tensor detached = s.detach().contiguous();
          int64_t offset = 0;
          for (uint64_t g : batch) {
            const size_t n = group_begin[g + 1] - group_begin[g];
            const std::span<const float> gy(y + group_begin[g], n);
            const auto pairs = cks::models_detail::sample_pairs(gy, std::span<const int>(grade + group_begin[g], n), pair_cap,
                                                                needle_top, rng);
            std::vector<float> w(pairs.size(), 1.0f);
            if (lambda)
              w = cks::models_detail::lambdarank_weights(gy, std::span<const float>(detached.data_ptr<float>() + offset, n),
                                                         pairs, exponential);
            for (size_t p = 0; p < pairs.size(); ++p) {
              hi.push_back(offset + pairs[p].hi);
              lo.push_back(offset + pairs[p].lo);
              weight.push_back(w[p]);
            }
            offset += static_cast<int64_t>(n);
          }
          if (hi.empty()) continue;  // groups of one band: nothing to order
          const torch::Tensor ih = torch::tensor(hi), il = torch::tensor(lo), wt = torch::tensor(weight);
          const torch::Tensor pair_loss = torch::nn::functional::softplus(-(s.index_select(0, ih) - s.index_select(0, il)));
          // RankNet: mean over pairs; LambdaRank: |dNDCG|-weighted sum per group, averaged over groups.
          loss = lambda ? (pair_loss * wt).sum() / static_cast<double>(batch.size()) : pair_loss.mean();
        }
        adam.zero_grad();
        loss.backward();
        adam.step();
      }
      if (progress) progress(epoch + 1, epochs);
    }
    *out_json = copy_string(export_layers(net).dump());
    return 0;
  } catch (const std::exception& e) {
    *out_json = copy_string(e.what());
    return 1;
  }
}

extern "C" void cks_mlp_free(char* p) { std::free(p); }
