// The model cache (src/models/model_cache.cpp, common/cache_file.hpp): Model::load of an XGBoost
// model file writes its parsed model to $CKS_CACHE_DIR and a later load reads it back; the model
// read back is the model parsed (same file bytes, same scores); a stale, truncated, corrupt or
// inconsistent entry is parsed again and rewritten, never a crash; CKS_CACHE_DIR=off writes nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/cache_file.hpp"
#include "common/test_util.hpp"
#include "models/base64.hpp"
#include "models/rankers.hpp"
#include "models/synthetic.hpp"
#include "models/tree_ensemble.hpp"

using namespace cks;
namespace fs = std::filesystem;

namespace {

const std::string& xgboost_file() { return test::small_xgboost_file(); }

std::vector<std::string> entries(const std::string& dir, const std::string& prefix) {
  return test::files_with_prefix(dir, prefix);
}

std::string read_bytes(const std::string& path) { return test::slurp(path); }

// Loads the model once (a miss: the entry is written) and returns the entry's path.
std::string written_entry(const std::string& dir) {
  Model::load(xgboost_file());
  const auto written = entries(dir, "model-");
  if (written.size() != 1) throw std::runtime_error("expected one model entry");
  return written[0];
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The model is the one parsed from the file: the same file text, info and scores.
void expect_same_model(const Model& a, const Model& b) {
  EXPECT_EQ(a.serialize(), b.serialize());
  EXPECT_EQ(a.info().source_hash, b.info().source_hash);
  EXPECT_EQ(a.info().evidence.groups.size(), b.info().evidence.groups.size());
  EXPECT_EQ(a.terms(), b.terms());
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::vector<Candidate> picked;
  for (size_t i = 0; i < cat.candidates().size(); i += 499) picked.push_back(cat.candidates()[i]);
  FeatureMatrix x;
  FeatureComputer(cat.kernels(), default_hw()).compute(Problem{1024, 4096, 512, Layout::tn}, picked, x);
  std::vector<float> sa(x.rows), sb(x.rows);
  a.predict(x, sa);
  b.predict(x, sb);
  EXPECT_EQ(0, std::memcmp(sa.data(), sb.data(), sa.size() * sizeof(float)));
}

}  // namespace

TEST(ModelCache, RoundTripGivesTheParsedModel) {
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  const auto parsed = Model::deserialize(read_bytes(xgboost_file()), xgboost_file());
  EXPECT_NE(parsed->info().source_hash, 0u);
  const auto first = Model::load(xgboost_file());  // a miss: parsed and written
  const auto written = entries(dir.path(), "model-");
  ASSERT_EQ(written.size(), 1u);
  const auto mtime = fs::last_write_time(written[0]);
  const auto second = Model::load(xgboost_file());  // a hit
  EXPECT_EQ(entries(dir.path(), "model-"), written);
  expect_same_model(*parsed, *first);
  expect_same_model(*parsed, *second);
  EXPECT_EQ(second->info().options.to_json(), parsed->info().options.to_json());
  EXPECT_EQ(second->info().provenance, parsed->info().provenance);
  EXPECT_GE(fs::last_write_time(written[0]), mtime);  // touched, not rewritten: same content
  // The booster's bytes (read on first use) come from the model file when the entry is gone, and
  // a clear error when neither holds them any more.
  const auto third = Model::load(xgboost_file());
  fs::remove(written[0]);
  EXPECT_EQ(third->serialize(), parsed->serialize());
  Model::load(xgboost_file());  // a miss: rewrites the entry
  const auto fourth = Model::load(xgboost_file());  // a hit: the booster's bytes not read yet
  const std::string file = test::slurp(xgboost_file());
  fs::remove(written[0]);
  write_bytes(xgboost_file(), file + "\n");
  try {
    fourth->serialize();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no longer available"), std::string::npos) << e.what();
  }
  write_bytes(xgboost_file(), file);
}

TEST(ModelCache, StaleOrCorruptEntriesAreRebuilt) {
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  const auto reference = Model::deserialize(read_bytes(xgboost_file()), xgboost_file());
  const std::vector<std::string> written{written_entry(dir.path())};
  const std::string good = read_bytes(written[0]);
  ASSERT_GT(good.size(), 200u);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x5a;
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  std::string stale_key = good;
  stale_key[32] ^= 1;  // the header's key (after magic, format, endian mark and kind)
  const std::vector<std::pair<const char*, std::string>> damaged{
      {"empty", ""},
      {"truncated header", good.substr(0, 20)},
      {"truncated payload", good.substr(0, good.size() - 7)},
      {"extra bytes", good + "x"},
      {"flipped payload byte", flipped},
      {"bad magic", bad_magic},
      {"another key", stale_key},
      {"garbage", std::string(4096, '\x7f')},
  };
  for (const auto& [what, bytes] : damaged) {
    write_bytes(written[0], bytes);
    std::unique_ptr<Model> m;
    ASSERT_NO_THROW(m = Model::load(xgboost_file())) << what;
    expect_same_model(*reference, *m);
    EXPECT_EQ(read_bytes(written[0]), good) << what << ": rewritten";
  }
  // A directory where the entry should be: loads, nothing written.
  fs::remove(written[0]);
  fs::create_directory(written[0]);
  EXPECT_NO_THROW(expect_same_model(*reference, *Model::load(xgboost_file())));
  fs::remove(written[0]);
}

TEST(ModelCache, ConsistentChecksumButInconsistentTreesIsRefused) {
  // A payload whose checksum is right but whose trees point outside their arrays (a bug or a
  // hand-made file) must be refused by the reader and rebuilt, not walked.
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  const auto reference = Model::deserialize(read_bytes(xgboost_file()), xgboost_file());
  const std::vector<std::string> written{written_entry(dir.path())};
  const std::string good = read_bytes(written[0]);
  uint64_t key;
  std::memcpy(&key, good.data() + 32, 8);  // the header's key (after magic, format, endian mark, kind)
  const std::string payload = good.substr(56);
  // The XGBoost part: u64 0 columns, u64 node count, the nodes (float condition, u32 left child,
  // u32 split; the root is a split with left child 1), ...
  const std::string blob = models_detail::xgboost_blob(*reference);
  const uint64_t nodes = models_detail::TreeEnsemble::from_xgboost(blob).nodes();
  std::string marker(16, '\0');
  std::memcpy(marker.data() + 8, &nodes, 8);  // u64 0 columns, u64 node count
  const size_t at = payload.find(marker);
  ASSERT_NE(at, std::string::npos);
  const size_t root = at + 16;
  uint32_t left;
  std::memcpy(&left, payload.data() + root + 4, 4);
  ASSERT_EQ(left, 1u);
  for (uint32_t bad_left : {0xffffff00u, 0u}) {  // out of the arrays; a split looping on itself
    std::string p = payload;
    std::memcpy(p.data() + root + 4, &bad_left, 4);
    ASSERT_TRUE(write_cache_entry(written[0], "model", key, p));
    std::unique_ptr<Model> m;
    ASSERT_NO_THROW(m = Model::load(xgboost_file())) << bad_left;
    expect_same_model(*reference, *m);
    EXPECT_EQ(read_bytes(written[0]), good) << bad_left << ": rebuilt";
  }
}

TEST(ModelCache, OffWritesNothing) {
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", "off");
  test::ScopedEnv xdg("XDG_CACHE_HOME", dir.path());
  test::ScopedEnv home("HOME", dir.path());
  EXPECT_EQ(cache_dir(), "");
  const auto m = Model::load(xgboost_file());
  EXPECT_NE(m->info().source_hash, 0u);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(ModelCache, CacheDirFollowsTheEnvironment) {
  test::ScopedEnv none("CKS_CACHE_DIR", "");
  {
    test::ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(cache_dir(), "/x/cache/cks");
  }
  {
    test::ScopedEnv xdg("XDG_CACHE_HOME", "relative");
    test::ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(cache_dir(), "/home/u/.cache/cks");
  }
  test::ScopedEnv set("CKS_CACHE_DIR", "/elsewhere");
  EXPECT_EQ(cache_dir(), "/elsewhere");
}

TEST(CacheFile, EntriesRoundTripAndRejectEverythingElse) {
  test::ScratchDir dir;
  const std::string path = dir.file("sub/e.bin");
  EXPECT_FALSE(read_cache_entry(path, "k", 1).has_value());
  ASSERT_TRUE(write_cache_entry(path, "k", 1, "payload"));
  const auto entry = read_cache_entry(path, "k", 1);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->payload, "payload");
  EXPECT_FALSE(read_cache_entry(path, "k", 2).has_value());      // another key
  EXPECT_FALSE(read_cache_entry(path, "other", 1).has_value());  // another kind
  // Eviction keeps the most recently used entries of a prefix.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(write_cache_entry(dir.file("p-" + std::to_string(i)), "k", 1, "x", "p-", 2));
  EXPECT_EQ(entries(dir.path(), "p-").size(), 2u);
  EXPECT_TRUE(fs::exists(dir.file("p-4")));
  // An unwritable place is a false, not an exception.
  EXPECT_FALSE(write_cache_entry("/proc/cks-no-such/e.bin", "k", 1, "x"));
  // The reader's bounds.
  BinaryWriter w;
  w.u64(3);
  w.str("ab");
  BinaryReader r(w.data());
  EXPECT_EQ(r.u64(), 3u);
  EXPECT_EQ(r.str(), "ab");
  EXPECT_TRUE(r.done());
  EXPECT_THROW(r.u64(), CacheCorrupt);
  BinaryWriter huge;
  huge.u64(uint64_t{1} << 40);
  BinaryReader h(huge.data());
  EXPECT_THROW(h.str(), CacheCorrupt);
  EXPECT_NE(hash64("a"), hash64("b"));
  EXPECT_NE(hash64(std::string(100, 'a')), hash64(std::string(101, 'a')));
}
