// The bad-input fuzz suite (issue 18; docs/reliability.md): generates at least 1,000 hostile
// inputs over every subcommand and runs the real `cks` binary on each, asserting the error
// contract: a non-zero exit (not a signal, not a hang), stderr exactly one line starting
// "cks: error:", input files unchanged (content hash before/after), no file left behind in the
// directories the command was given (its inputs' directory, its working directory, TMPDIR).
//
// Deterministic: CKS_FUZZ_SEED (default 1) seeds the random cases, CKS_FUZZ_CASES (default 300)
// sets how many of them there are on top of the systematic ones; CKS_FUZZ_THREADS the parallel
// runs (default 2). A longer run: CKS_FUZZ_SEED=7 CKS_FUZZ_CASES=20000 build/bin/cks_fuzz.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <lzma.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"
#include "cks/features.hpp"
#include "common/subprocess.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using cks::Catalogue;
using cks::Layout;
using cks::MainloopSchedule;
using cks::TileSchedulerKind;
using nlohmann::json;

// --- the case model ------------------------------------------------------------------------

struct Case {
  std::string name;
  std::vector<std::string> args;              // after "cks"
  std::map<std::string, std::string> env;     // added to the environment
  std::string expect;                         // stderr must contain this (empty: anything)
  std::string xfail;                          // known defect of issue 18 not fixed on this branch
  std::vector<std::string> inputs;            // files whose content must not change
  std::vector<std::string> dirs;              // directories that must not gain or lose entries
  std::vector<std::string> isolate;           // inputs copied into the case's own directory first
                                              // (files a command may wrongly write next to: the
                                              // parallel cases must not see each other's)
};

struct Outcome {
  bool passed = false;
  std::string why;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string gzip(std::string_view bytes) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz(std::string_view bytes) {
  std::string out(lzma_stream_buffer_bound(bytes.size()), '\0');
  size_t pos = 0;
  lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                          reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
  out.resize(pos);
  return out;
}

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Content hash of a file (or "absent"/"dir"), for the no-change check.
std::string fingerprint(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return "absent";
  if (S_ISDIR(st.st_mode)) return "dir";
  if (!S_ISREG(st.st_mode)) return "special";
  if (st.st_size > (64 << 20)) return "size:" + std::to_string(st.st_size);  // sparse huge files
  return std::to_string(st.st_size) + ":" + cks::hex64(cks::fnv1a64(read_all(path)));
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename().string());
  return out;
}

// Runs cks with argv (no shell), stdin /dev/null, stdout discarded, stderr captured; kills it
// after timeout_s. Returns the wait status (or -1 on a timeout) and stderr.
int run_cks(const Case& c, const std::string& cwd, const std::string& tmpdir, double timeout_s, std::string& err) {
  std::vector<std::string> argv{std::string(CKS_BIN_DIR) + "/cks"};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (key == "TMPDIR" || c.env.count(key)) continue;
    envs.push_back(kv);
  }
  envs.push_back("TMPDIR=" + tmpdir);
  for (const auto& [k, v] : c.env) envs.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return -2;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  // posix_spawn has no chdir in glibc 2.36's API (posix_spawn_file_actions_addchdir_np is there).
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargv[0], &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    return -2;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  char buf[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    const int pr = poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    const ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (err.size() < (1 << 20)) err.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL);  // anything it left in its process group
  return timed_out ? -1 : status;
}

Outcome check_case(const Case& original, const std::string& scratch) {
  Outcome o;
  std::error_code ec;
  const std::string cwd = scratch + "/cwd", tmp = scratch + "/tmp", own = scratch + "/own";
  fs::remove_all(scratch, ec);
  fs::create_directories(cwd);
  fs::create_directories(tmp);
  Case c = original;
  if (!c.isolate.empty()) {
    fs::create_directories(own);
    c.dirs = {own};
    for (const auto& src : c.isolate) {
      const std::string dst = own + "/" + fs::path(src).filename().string();
      fs::copy(src, dst, fs::copy_options::recursive, ec);
      for (auto& a : c.args)
        if (a == src) a = dst;
      if (fs::is_directory(dst)) {
        c.dirs.push_back(dst);
        for (const auto& e : fs::directory_iterator(dst)) c.inputs.push_back(e.path().string());
      } else {
        c.inputs.push_back(dst);
      }
    }
  }
  std::map<std::string, std::string> before;
  for (const auto& f : c.inputs) before[f] = fingerprint(f);
  std::map<std::string, std::set<std::string>> listed;
  for (const auto& d : c.dirs) listed[d] = entries(d);
  std::string err;
  const int status = run_cks(c, cwd, tmp, 120, err);
  auto fail = [&](const std::string& why) {
    if (o.why.empty()) o.why = why;
  };
  if (status == -2) fail("could not start cks");
  else if (status == -1) fail("hang: killed after 120 s");
  else if (WIFSIGNALED(status)) fail("killed by signal " + std::to_string(WTERMSIG(status)));
  else if (WEXITSTATUS(status) == 0) fail("exit code 0");
  const size_t newlines = std::count(err.begin(), err.end(), '\n');
  if (newlines != 1 || err.back() != '\n') fail("stderr is " + std::to_string(newlines) + " lines");
  if (err.rfind("cks: error: ", 0) != 0) fail("stderr does not start with 'cks: error: '");
  if (!c.expect.empty() && err.find(c.expect) == std::string::npos) fail("stderr lacks '" + c.expect + "'");
  for (const auto& [f, fp] : before)
    if (fingerprint(f) != fp) fail("input changed: " + f);
  for (const auto& [d, names] : listed)
    if (entries(d) != names) fail("files added or removed in " + d);
  if (!entries(tmp).empty()) fail("temporary files left in TMPDIR");
  if (!entries(cwd).empty()) fail("files left in the working directory");
  if (!o.why.empty()) o.why += " | stderr: " + cks::one_line(err, 300);
  o.passed = o.why.empty();
  return o;
}

// --- inputs ----------------------------------------------------------------------------------

// Values that no numeric option may take, by CLI11 type name.
const std::vector<std::string> kBadAny = {"", "abc", "1x", "nan", "inf", "-inf", "1e999", "99999999999999999999999",
                                          "-99999999999999999999999", "\x01\x02\xff", "1\n2", " "};
const std::vector<std::string> kBadInt = {"1.5", "0x"};
const std::vector<std::string> kBadUint = {"-1", "-0.5"};

struct Fixture {
  std::string root;                 // every input lives under here
  std::string inputs;               // inputs/ (watched for new files)
  std::string registry;             // a real registry (from a committed shard)
  std::string plan;                 // a valid plan
  std::string model;                // a small valid-looking model (typed fields)
  std::string schema_hash;
  std::vector<std::string> files;   // every input file (hashed before/after)
};

std::string sub(const Fixture& f, const std::string& name) { return f.inputs + "/" + name; }

// A registry made of a committed shard (its smallest), so commands see a real schema.
void make_registry(Fixture& f) {
  std::string smallest;
  uintmax_t size = UINTMAX_MAX;
  for (const auto& e : fs::directory_iterator(std::string(CKS_SOURCE_DIR) + "/data/shards"))
    if (e.path().string().ends_with(".db.gz") && e.file_size() < size) size = e.file_size(), smallest = e.path();
  f.registry = sub(f, "reg.db");
  write_file(f.registry, gunzip_file(smallest));
}

void add(Fixture& f, const std::string& name, std::string_view bytes) {
  write_file(sub(f, name), bytes);
  f.files.push_back(sub(f, name));
}

std::string foreign_sqlite(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE people(name TEXT, age INT); INSERT INTO people VALUES('a', 1);", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  return path;
}

json model_json(const Fixture& f) {
  return {{"format", "cks-model-1"},
          {"kind", "ridge"},
          {"objective", "squared"},
          {"schema", {{"version", "x"}, {"hash", f.schema_hash}}},
          {"hw_preset", "h200-sxm"},
          {"options", json::object()},
          {"provenance", json::object()},
          {"parameters", json::object()}};
}

std::string deep(const std::string& open, const std::string& close, size_t levels) {
  std::string s;
  s.reserve(levels * (open.size() + close.size()));
  for (size_t i = 0; i < levels; ++i) s += open;
  s += "1";
  for (size_t i = 0; i < levels; ++i) s += close;
  return s;
}

// --- generators --------------------------------------------------------------------------------

struct Suite {
  Fixture fx;
  std::vector<Case> cases;
  std::mt19937_64 rng;

  Case& add_case(std::string name, std::vector<std::string> args, std::string expect = "") {
    Case c;
    c.name = std::move(name);
    c.args = std::move(args);
    c.expect = std::move(expect);
    c.inputs = fx.files;
    c.dirs = {fx.inputs};
    cases.push_back(std::move(c));
    return cases.back();
  }

  // Every subcommand path, from `cks --help` recursively.
  std::vector<std::vector<std::string>> subcommands() {
    std::vector<std::vector<std::string>> out, todo{{}};
    while (!todo.empty()) {
      auto path = todo.back();
      todo.pop_back();
      const std::string help = help_text(path);
      const auto pos = help.find("Subcommands:");
      if (!path.empty()) out.push_back(path);
      if (pos == std::string::npos) continue;
      std::istringstream in(help.substr(pos));
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, std::regex(R"(\s{2}(\S+)\s.*|\s{2}(\S+))"))) {
          auto next = path;
          next.push_back(m[1].matched ? m[1].str() : m[2].str());
          todo.push_back(next);
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string help_text(const std::vector<std::string>& path) {
    std::vector<std::string> argv{std::string(CKS_BIN_DIR) + "/cks"};
    argv.insert(argv.end(), path.begin(), path.end());
    argv.push_back("--help");
    return cks::run_argv(argv).output;
  }

  // Systematic: every numeric option of every subcommand (found in its --help by CLI11's type
  // names INT, UINT, FLOAT) with every value no number may be. The error must name the option.
  void numeric_options() {
    const std::regex opt_re(R"(^\s+(?:-\w,)?(--[\w-]+)(?:,-\w)?\s+(\[?)(INT|UINT|FLOAT)\b)");
    size_t options = 0;
    for (const auto& path : subcommands()) {
      std::istringstream in(help_text(path));
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, opt_re)) continue;
        ++options;
        const std::string opt = m[1], type = m[3];
        // Per option: the values its type must refuse, plus a window of kBadAny that moves from
        // option to option (every value meets many options, the suite stays small enough for CI).
        std::vector<std::string> bad;
        if (type == "FLOAT") bad = {"nan", "inf", "-1"};
        else if (type == "UINT") bad = {"-1", "1.5"};
        else bad = {"1.5", "0x"};
        std::vector<std::string> pool;
        for (const auto& v : kBadAny)
          if (std::find(bad.begin(), bad.end(), v) == bad.end() &&
              !(type == "FLOAT" && v == "99999999999999999999999"))  // a finite (huge) real is a number
            pool.push_back(v);
        for (size_t j = 0; j < 4; ++j) bad.push_back(pool[(options * 4 + j) % pool.size()]);
        for (const auto& v : bad) {
          std::string name = "numeric";
          for (const auto& p : path) name += " " + p;
          auto args = path;
          args.push_back(opt);
          args.push_back(v);
          add_case(name + " " + opt + " " + cks::one_line(v), args, opt);
        }
      }
    }
    EXPECT_GT(options, 60u) << "the --help parser found too few numeric options";
  }

  // Problem dimensions: the shared check (cks::check_problem) from every command taking them.
  void problems() {
    const std::vector<std::vector<std::string>> commands = {
        {"features"}, {"sample"}, {"select", "--fallback", "static", "--model", sub(fx, "absent.json")}};
    struct Bad {
      std::string m, n, k, layout, expect;
    };
    const std::vector<Bad> bad = {
        {"0", "64", "64", "tn", "M must be positive"},
        {"-8", "64", "64", "tn", "M must be positive"},
        {"2147483648", "64", "64", "tn", "M is too large"},
        {"9223372036854775807", "64", "64", "tn", "M is too large"},
        {"64", "2147483648", "64", "nt", "N is too large"},
        {"64", "64", "4294967296", "nn", "K is too large"},
        {"1", "64", "64", "tn", "M must be a multiple of 8"},
        {"24", "64", "12", "tn", "K must be a multiple of 8"},
        {"64", "12", "64", "nt", "N must be a multiple of 8"},
        {"64", "12", "64", "tt", "N must be a multiple of 8"},
        {"64", "64", "12", "tt", "K must be a multiple of 8"},
        {"64", "64", "12", "nn", "K must be a multiple of 8"},
        {"64", "64", "64", "xx", "unknown layout"},
        {"64", "64", "64", "tn\n", "unknown layout"},
        {"64", "64", "64", "\xff\xfe", "unknown layout"},
        {"64", "64", "64", "", "unknown layout"},
    };
    for (const auto& cmd : commands)
      for (const auto& b : bad) {
        auto args = cmd;
        for (const auto& [o, v] : {std::pair{"--m", b.m}, {"--n", b.n}, {"--k", b.k}, {"--layout", b.layout}})
          args.insert(args.end(), {o, v});
        add_case("problem " + cmd[0] + " " + cks::one_line(b.m + "x" + b.n + "x" + b.k + "_" + b.layout), args, b.expect);
      }
  }

  // Model files: truncated, deep, wrong types, huge, not regular.
  void models() {
    std::vector<std::pair<std::string, std::string>> files;  // name, expected text
    const std::string valid = model_json(fx).dump();
    for (size_t cut : {size_t{0}, size_t{1}, size_t{10}, valid.size() / 2, valid.size() - 1})
      files.push_back({"model_trunc_" + std::to_string(cut) + ".json", valid.substr(0, cut)});
    auto with = [&](const std::string& key, const json& v) {
      json j = model_json(fx);
      if (v.is_discarded()) j.erase(key);
      else j[key] = v;
      return j.dump();
    };
    const json gone = json(json::value_t::discarded);
    for (const char* key : {"format", "kind", "objective", "schema", "hw_preset", "options", "provenance", "parameters"}) {
      for (const json& v : {json(7), json(nullptr), json::array(), json("x"), json::object(), gone, json(true)}) {
        if ((std::string(key) == "options" || std::string(key) == "provenance" || std::string(key) == "parameters") &&
            v.is_object())
          continue;  // valid types
        files.push_back({"model_" + std::string(key) + "_" + (v.is_discarded() ? "missing" : v.type_name()) + ".json",
                         with(key, v)});
      }
    }
    json deep_prov = model_json(fx);
    files.push_back({"model_deep_provenance.json",
                     valid.substr(0, valid.size() - 1) + ",\"x\":" + deep("[", "]", 200000) + "}"});
    files.push_back({"model_deep_object.json", deep("{\"a\":", "}", 100000)});
    files.push_back({"model_ridge_bad_params.json", with("parameters", json{{"weights", "zz"}, {"bias", json::array()}})});
    files.push_back({"model_xgb_bad.json", [&] {
                       json j = model_json(fx);
                       j["kind"] = "xgboost";
                       j["objective"] = "reg:squarederror";
                       j["parameters"] = {{"encoding", "ubj+base64"}, {"features", 1}, {"booster", "!!!"}};
                       return j.dump();
                     }()});
    files.push_back({"model_binary.json", std::string("\x00\x01\xff{\n\n", 7)});
    files.push_back({"model_list.json", "[1,2,3]"});
    for (const auto& [name, bytes] : files) add(fx, name, bytes);
    // A 2 GiB sparse file and special files.
    {
      const std::string huge = sub(fx, "model_huge.json");
      const int fd = open(huge.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      if (fd >= 0) {
        (void)!ftruncate(fd, off_t{2} << 30);
        close(fd);
      }
      files.push_back({"model_huge.json", ""});
    }
    std::vector<std::string> paths;
    for (const auto& [name, bytes] : files) paths.push_back(sub(fx, name));
    paths.insert(paths.end(), {"/dev/zero", "/dev/null", fx.inputs, sub(fx, "nope.json")});
    for (const auto& p : paths) {
      add_case("model select " + fs::path(p).filename().string(),
               {"select", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--model", p});
      add_case("model eval " + fs::path(p).filename().string(),
               {"eval", "--model", p, "--registry", fx.registry, "--no-nvmmh", "--no-baselines"});
    }
  }

  // Registries and shards: empty, truncated, foreign SQLite, garbage, garbage gz.
  void registries() {
    const std::string real = read_all(fx.registry);
    struct Bad {
      std::string name, bytes, xfail;
    };
    // (Part A is merged: defects 5 and 11 are fixed, so no case is an expected failure any more;
    // the hook stays for the next known defect.)
    auto xfail_for = [](const std::vector<std::string>&, const std::string&) -> std::string { return ""; };
    std::vector<Bad> bad = {
        {"empty.db", "", ""},
        {"trunc100.db", real.substr(0, 100), ""},
        {"trunc4096.db", real.substr(0, 4096), ""},
        {"trunchalf.db", real.substr(0, real.size() / 2), ""},
        {"garbage.db", std::string(5000, '\x5a'), ""},
        {"binary.db", std::string("\x00\xff\n\x01SQLite format 3\n", 20), ""},
    };
    for (const auto& b : bad) add(fx, b.name, b.bytes);
    foreign_sqlite(sub(fx, "foreign.db"));
    fx.files.push_back(sub(fx, "foreign.db"));
    bad.push_back({"foreign.db", "", ""});
    const std::vector<std::vector<std::string>> readers = {
        {"data", "stats"},
        {"data", "export"},
        {"analyze", "failures"},
        {"analyze", "noise"},
        {"analyze", "repeatability"},
        {"train", "--out", sub(fx, "never.json"), "--model", "ridge"},
        {"eval", "--model", "ridge", "--no-nvmmh"},
    };
    for (const auto& b : bad)
      for (const auto& r : readers) {
        auto args = r;
        args.insert(args.end(), {"--registry", sub(fx, b.name)});
        Case& c = add_case("registry " + r[0] + " " + r[1] + " " + b.name, args);
        c.xfail = xfail_for(r, b.name);
        c.isolate = {sub(fx, b.name)};
      }
    for (const auto& b : bad) {
      Case& c = add_case("registry plan remaining " + b.name,
               {"plan", "remaining", fx.plan, "--registry", sub(fx, b.name), "--out", sub(fx, "never.jsonl")});
      c.xfail = xfail_for({"plan"}, b.name);
      c.isolate = {sub(fx, b.name)};
    }
    // Shard directories: each holds one bad shard (or a bad one next to a good one).
    struct Shard {
      std::string name, bytes, xfail;
    };
    const std::string real_gz = gzip(real);
    const std::vector<Shard> shards = {
        {"zero", "", ""},
        {"garbage", std::string(3000, 'g'), ""},
        {"truncgz", real_gz.substr(0, real_gz.size() / 3), ""},
        {"gznotdb", gzip("hello, not a database\n"), ""},
        {"gzempty", gzip(""), ""},
        {"gzforeign", gzip(read_all(sub(fx, "foreign.db"))), ""},
        {"gztrunc", gzip(real.substr(0, 8192)), ""},
    };
    // Every bad stream also under an xz shard's name (shards are xz since session 14): gzip or
    // garbage bytes where liblzma expects xz.
    std::vector<std::pair<Shard, std::string>> named;
    for (const auto& s : shards) named.push_back({s, ".db.gz"});
    for (const auto& s : shards) named.push_back({Shard{s.name + "_xz", s.bytes, s.xfail}, ".db.xz"});
    // Columnar shards (.cols.xz): bad xz streams, and good xz streams of bad columns.
    for (const auto& s : shards) named.push_back({Shard{s.name + "_cols", s.bytes, s.xfail}, ".cols.xz"});
    const std::string head = R"({"format":"cks-shard-columns-1"})" "\n", end = R"({"end":"cks-shard-columns-1"})" "\n";
    const std::vector<Shard> columns = {
        {"cols_text", xz("hello, not columns\n"), ""},
        {"cols_empty", xz(""), ""},
        {"cols_headonly", xz(head), ""},
        {"cols_noregistry", xz(head + end), ""},
        {"cols_drop", xz(head + R"j({"table":"meta","sql":"DROP TABLE meta","columns":["x"],"rows":0})j" "\n" + end), ""},
        {"cols_attach", xz(head + R"j({"table":"a","sql":"ATTACH 'x.db' AS x","columns":["x"],"rows":0})j" "\n" + end), ""},
        {"cols_rows", xz(head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":99999999999})j" "\n[1]\n" + end), ""},
        {"cols_value", xz(head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":1})j" "\n[[1,2]]\n" + end), ""},
        {"cols_deep", xz(head + std::string(100000, '[') + "\n"), ""},
        {"cols_derive", xz(head + R"j({"table":"measurements","sql":"CREATE TABLE measurements(group_key TEXT, mean_us REAL, tflops REAL)","columns":["group_key","mean_us","tflops"],"rows":1})j"
                                  "\n[\"x\"]\n[1.0]\n" R"j({"derive":"tflops-6g","values":[1]})j" "\n" + end), ""},
    };
    for (const auto& s : columns) named.push_back({s, ".cols.xz"});
    for (const auto& [s, ext] : named) {
      const std::string dir = sub(fx, "shards_" + s.name);
      fs::create_directories(dir);
      write_file(dir + "/a" + ext, s.bytes);
      fx.files.push_back(dir + "/a" + ext);
      for (const auto& r : readers) {
        auto args = r;
        args.insert(args.end(), {"--data", dir});
        Case& c = add_case("shards " + r[0] + " " + r[1] + " " + s.name, args);
        c.xfail = xfail_for(r, "shards_" + s.name);
        c.isolate = {dir};
      }
    }
  }

  // Plans: bad JSON, bad knobs, huge dimensions, deep nesting, wrong types, special files.
  void plans() {
    const std::string header = R"({"plan_version":1,"name":"p","created_by":"fuzz"})";
    const Catalogue& cat = Catalogue::get(Layout::tn);
    // A persistent (swizzle-taking) and a stream-K kernel of the catalogue.
    std::string persistent, streamk, basic;
    for (const auto& k : cat.kernels()) {
      if (persistent.empty() && k.mainloop != MainloopSchedule::tma_ws && k.scheduler == TileSchedulerKind::persistent)
        persistent = k.id();
      if (streamk.empty() && k.scheduler == TileSchedulerKind::stream_k) streamk = k.id();
      if (basic.empty() && k.mainloop == MainloopSchedule::tma_ws) basic = k.id();
    }
    auto group = [](const std::string& fields, const std::string& cands) {
      return R"({"group":{)" + fields + R"(},"candidates":)" + cands + "}";
    };
    const std::string g = R"("m":128,"n":256,"k":512,"layout":"tn")";
    auto cand = [](const std::string& id, const std::string& knobs) { return "[[\"" + id + "\",\"" + knobs + "\"]]"; };
    std::vector<std::pair<std::string, std::vector<std::string>>> plans = {
        {"empty", {}},
        {"notjson", {header, "{not json"}},
        {"noheader", {group(g, cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"version2", {R"({"plan_version":2})"}},
        {"versionstr", {R"({"plan_version":"1"})"}},
        {"headerarray", {"[1]"}},
        {"binary", {header, std::string("\x00\xff\x01", 3)}},
        {"knobs_neg", {header, group(g, cand(persistent, "r=m,s=-1,d=h,k=-4"))}},
        {"knobs_999", {header, group(g, cand(persistent, "r=m,s=999,d=h,k=1"))}},
        {"knobs_s3", {header, group(g, cand(persistent, "r=m,s=3,d=h,k=1"))}},
        {"knobs_split_on_persistent", {header, group(g, cand(persistent, "r=m,s=1,d=sk,k=4"))}},
        {"knobs_swizzle_on_streamk", {header, group(g, cand(streamk, "r=m,s=8,d=h,k=1"))}},
        {"knobs_raster_on_basic", {header, group(g, cand(basic, "r=n,s=1,d=h,k=1"))}},
        {"knobs_fake_kernel_bad", {header, group(g, cand("k0123456789abcdef", "r=m,s=16,d=h,k=1"))}},
        {"knobs_fake_split_bad", {header, group(g, cand("k0123456789abcdef", "r=m,s=1,d=sk,k=3"))}},
        {"knobs_text", {header, group(g, cand(persistent, "r=m,s=1,d=h,k=1\nx"))}},
        {"knobs_garbage", {header, group(g, cand(persistent, "zzz"))}},
        {"dims_2p31", {header, group(R"("m":2147483648,"n":256,"k":512,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"dims_huge", {header, group(R"("m":18446744073709551615,"n":256,"k":512,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"dims_neg", {header, group(R"("m":-8,"n":256,"k":512,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"dims_float", {header, group(R"("m":1e3,"n":256,"k":512,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"dims_string", {header, group(R"("m":"128","n":256,"k":512,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"dims_align", {header, group(R"("m":128,"n":256,"k":12,"layout":"tn")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"layout_bad", {header, group(R"("m":128,"n":256,"k":512,"layout":"xy")", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"deep_tags", {header, group(g + R"(,"tags":)" + deep("[", "]", 100000), cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"deep_line", {header, deep("{\"a\":", "}", 100000)}},
        {"budget_neg", {header, group(g + R"(,"budget":-1)", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"seed_neg", {header, group(g + R"(,"seed":-1)", cand(persistent, "r=m,s=1,d=h,k=1"))}},
        {"cands_obj", {header, group(g, "{}")}},
        {"cands_badid", {header, group(g, cand("kXYZ", "r=m,s=1,d=h,k=1"))}},
        {"dup_group", {header, group(g, cand(persistent, "r=m,s=1,d=h,k=1")), group(g, cand(persistent, "r=m,s=2,d=h,k=1"))}},
        {"exhaustive_nopool", {header, group(g, "\"exhaustive\"")}},
        {"exhaustive_badpool", {header, group(g, "\"exhaustive\"") .substr(0, group(g, "\"exhaustive\"").size() - 1) + R"(,"pool":"/dev/zero"})"}},
    };
    std::vector<std::string> paths;
    for (const auto& [name, lines] : plans) {
      std::string text;
      for (const auto& l : lines) text += l + "\n";
      add(fx, "plan_" + name + ".jsonl", text);
      paths.push_back(sub(fx, "plan_" + name + ".jsonl"));
    }
    paths.insert(paths.end(), {"/dev/zero", fx.inputs, sub(fx, "absent.jsonl")});
    for (const auto& p : paths) {
      const std::string n = fs::path(p).filename().string();
      add_case("plan show " + n, {"plan", "show", p});
      add_case("plan remaining " + n, {"plan", "remaining", p, "--registry", fx.registry, "--out", sub(fx, "never.jsonl")});
      add_case("plan merge " + n, {"plan", "merge", p, fx.plan, "--out", sub(fx, "never.jsonl")});
      add_case("collect " + n, {"collect", "--plan", p, "--registry", sub(fx, "never.db"), "--backend", "fake"});
    }
    // Shapes CSVs for plan make.
    const std::vector<std::pair<std::string, std::string>> csvs = {
        {"empty", ""},
        {"nocols", "a,b\n1,2\n"},
        {"align", "m,n,k,layout\n128,256,12,tn\n"},
        {"huge", "m,n,k,layout\n2147483648,256,512,tn\n"},
        {"neg", "m,n,k,layout\n-8,256,512,tn\n"},
        {"text", "m,n,k,layout\nabc,256,512,tn\n"},
        {"layout", "m,n,k,layout\n128,256,512,zz\n"},
        {"fields", "m,n,k,layout\n128,256\n"},
        {"binary", std::string("m,n,k,layout\n\x00\x01\xff,1,1,tn\n", 24)},
    };
    for (const auto& [name, text] : csvs) {
      add(fx, "shapes_" + name + ".csv", text);
      add_case("plan make shapes " + name,
               {"plan", "make", "--shapes", sub(fx, "shapes_" + name + ".csv"), "--out", sub(fx, "never.jsonl")});
    }
    add_case("plan make shapes /dev/zero", {"plan", "make", "--shapes", "/dev/zero", "--out", sub(fx, "never.jsonl")});
  }

  // Hardware presets: a CKS_DATA_DIR whose hw/presets.json breaks the schema.
  void presets() {
    const json good = json::parse(read_all(std::string(CKS_SOURCE_DIR) + "/data/hw/presets.json"));
    std::vector<std::pair<std::string, std::string>> variants = {
        {"empty", ""},
        {"notjson", "{"},
        {"nopresets", R"({"x":1})"},
        {"presets_array", R"({"presets":[]})"},
        {"presets_empty", R"({"presets":{}})"},
        {"preset_number", R"({"presets":{"h200-sxm":5}})"},
        {"deep", deep("{\"presets\":", "}", 100000)},
        {"binary", std::string("\x00\xff\x01", 3)},
    };
    const std::vector<std::pair<std::string, json>> fields = {
        {"smem_per_sm_bytes", 0},     {"smem_per_block_optin_bytes", 0}, {"max_cluster_size_portable", 0},
        {"max_cluster_size_nonportable", 0}, {"sm_clock_mhz", 0},      {"regs_per_sm", 0},
        {"l2_bytes", -1},             {"sm_count", 0},                   {"sm_count", -132},
        {"hbm_bw_bytes_per_s", 0},    {"bf16_dense_flops_per_s", -1},    {"tma_bw_bytes_per_s", 0},
        {"regs_per_thread_max", 0},   {"max_threads_per_sm", 0},        {"max_blocks_per_sm", 0},
        {"sm_count", "132"},          {"sm_count", 1.5},                 {"l2_bytes", "big"},
        {"name", 5},                  {"cc_major", nullptr},             {"hbm_bytes", 1e300},
        {"sm_count", 1e12},           {"smem_per_sm_bytes", 1e15},
    };
    for (const auto& [field, value] : fields) {
      json j = good;
      j["presets"]["h200-sxm"][field] = value;
      variants.push_back({field + "_" + value.dump(), j.dump()});
    }
    for (const char* field : {"sm_count", "name", "l2_bytes", "regs_per_sm"}) {
      json j = good;
      j["presets"]["h200-sxm"].erase(field);
      variants.push_back({std::string(field) + "_missing", j.dump()});
    }
    const std::vector<std::vector<std::string>> commands = {
        {"hw"},
        {"hw", "--list"},
        {"catalogue", "stats"},
        {"features", "--m", "128", "--n", "128", "--k", "128", "--layout", "tn", "--limit", "1"},
        {"sample", "--m", "128", "--n", "128", "--k", "128", "--layout", "tn"},
        {"shapes", "--set", "paper"},
    };
    for (const auto& [name, text] : variants) {
      std::string safe = name;
      for (char& c : safe)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      const std::string dir = sub(fx, "presets_" + safe);
      fs::create_directories(dir + "/hw");
      write_file(dir + "/hw/presets.json", text);
      fx.files.push_back(dir + "/hw/presets.json");
      for (const auto& cmd : commands) {
        Case& c = add_case("presets " + name + " " + cmd[0] + (cmd.size() > 1 ? " " + cmd[1] : ""), cmd);
        c.env["CKS_DATA_DIR"] = dir;
      }
    }
  }

  // Strings with newlines and raw bytes where names are expected: the error stays one line.
  void strings() {
    const std::vector<std::string> values = {"a\nb", std::string("\x1b[31mred", 8), "\xff\xfe\xfd", "x\r\ny",
                                             std::string(100000, 'L'), "tab\there"};
    const std::vector<std::vector<std::string>> templates = {
        {"catalogue", "show", "@"},
        {"catalogue", "list", "--layout", "@"},
        {"hw", "--preset", "@"},
        {"shapes", "--set", "@"},
        {"features", "--m", "64", "--n", "64", "--k", "64", "--layout", "@"},
        {"features", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--format", "@"},
        {"sample", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--policy", "@"},
        {"data", "stats", "--registry", "@"},
        {"plan", "show", "@"},
        {"select", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--model", "@"},
        {"pool", "--layout", "@"},
        {"train", "--out", "@", "--model", "@"},
        {"@"},
    };
    for (const auto& t : templates)
      for (const auto& v : values) {
        auto args = t;
        for (auto& a : args)
          if (a == "@") a = v;
        std::string name = "string";
        for (const auto& a : t) name += " " + a;
        add_case(name + " <" + cks::one_line(v, 20) + ">", args);
      }
  }

  // Random combinations (the CKS_FUZZ_CASES knob): a subcommand with a random option and a
  // random hostile value, or a random mutation of a valid plan or model file.
  void random(size_t n) {
    const auto paths = subcommands();
    std::vector<std::string> pool = kBadAny;
    pool.insert(pool.end(), kBadInt.begin(), kBadInt.end());
    pool.insert(pool.end(), kBadUint.begin(), kBadUint.end());
    const std::string plan_text = read_all(fx.plan);
    std::uniform_int_distribution<int> kind(0, 2);
    for (size_t i = 0; i < n; ++i) {
      const int which = kind(rng);
      if (which == 0) {
        // Random bytes as a plan.
        std::string bytes = plan_text;
        const size_t flips = 1 + rng() % 8;
        for (size_t f = 0; f < flips && !bytes.empty(); ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng() % 256);
        bytes = bytes.substr(0, rng() % (bytes.size() + 1));
        const std::string name = "rnd_plan_" + std::to_string(i) + ".jsonl";
        add(fx, name, bytes);
        // A mutation may leave the plan valid; only an invalid one is a case.
        if (!plan_is_invalid(bytes)) continue;
        add_case("random plan " + std::to_string(i), {"plan", "show", sub(fx, name)});
      } else if (which == 1) {
        std::string bytes = model_json(fx).dump();
        const size_t flips = 1 + rng() % 4;
        for (size_t f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng() % 256);
        const std::string name = "rnd_model_" + std::to_string(i) + ".json";
        add(fx, name, bytes);
        add_case("random model " + std::to_string(i),
                 {"select", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--model", sub(fx, name)});
      } else {
        const auto& path = paths[rng() % paths.size()];
        auto args = path;
        args.push_back("--" + random_word());
        args.push_back(pool[rng() % pool.size()]);
        std::string name = "random option";
        for (const auto& p : args) name += " " + cks::one_line(p, 20);
        add_case(name, args);
      }
    }
  }

  std::string random_word() {
    static const char* words[] = {"m", "n", "k", "seed", "limit", "top", "budget", "alpha", "jobs", "deadline", "format"};
    return words[rng() % (sizeof words / sizeof *words)];
  }

  static bool plan_is_invalid(const std::string& bytes) {
    // Cheap check: a plan with every line valid JSON and the header intact may be valid; keep
    // only the mutations that break a line's JSON.
    std::istringstream in(bytes);
    std::string line;
    bool any = false;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      any = true;
      if (json::parse(line, nullptr, false).is_discarded()) return true;
    }
    return !any;
  }
};

TEST(Fuzz, BadInputsGetOneErrorLine) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t seed = std::stoull(env_or("CKS_FUZZ_SEED", "1"));
  const size_t random_cases = std::stoull(env_or("CKS_FUZZ_CASES", "150"));
  const size_t threads = std::max<size_t>(1, std::stoull(env_or("CKS_FUZZ_THREADS", "2")));
  Suite s;
  s.rng.seed(seed);
  std::string root = (fs::temp_directory_path() / "cks-fuzz-XXXXXX").string();
  ASSERT_TRUE(mkdtemp(root.data()));
  s.fx.root = root;
  s.fx.inputs = root + "/inputs";
  fs::create_directories(s.fx.inputs);
  s.fx.schema_hash = cks::FeatureSchema::get().hash_hex();
  make_registry(s.fx);
  s.fx.files.push_back(s.fx.registry);
  s.fx.plan = sub(s.fx, "good.jsonl");
  write_file(s.fx.plan, R"({"plan_version":1,"name":"good","created_by":"fuzz"})"
                        "\n"
                        R"({"group":{"m":128,"n":256,"k":512,"layout":"tn"},"candidates":[["k0123456789abcdef","r=h,s=1,d=h,k=1"]]})"
                        "\n");
  s.fx.files.push_back(s.fx.plan);

  s.numeric_options();
  s.problems();
  s.models();
  s.registries();
  s.plans();
  s.presets();
  s.strings();
  s.random(random_cases);
  // Every case hashes every input file (the fixture grew while the cases were generated).
  for (auto& c : s.cases) {
    c.inputs = s.fx.files;
  }
  const size_t n = s.cases.size();
  std::cerr << "cks fuzz: " << n << " cases (seed " << seed << ", " << random_cases << " random), " << threads
            << " threads\n";
  EXPECT_GE(n, 1000u);

  std::vector<Outcome> outcomes(n);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::string scratch = root + "/scratch" + std::to_string(t);
      for (size_t i; (i = next++) < n;) outcomes[i] = check_case(s.cases[i], scratch);
    });
  for (auto& th : pool) th.join();

  size_t passed = 0, xfailed = 0, xpassed = 0;
  std::map<std::string, size_t> xfail_by_defect;
  for (size_t i = 0; i < n; ++i) {
    const Case& c = s.cases[i];
    const Outcome& o = outcomes[i];
    if (!c.xfail.empty()) {
      if (o.passed) {
        ++xpassed;
        std::cerr << "cks fuzz: XPASS (defect " << c.xfail << " fixed? flip it): " << c.name << "\n";
      } else {
        ++xfailed;
        ++xfail_by_defect[c.xfail];
      }
      continue;
    }
    if (o.passed) ++passed;
    else ADD_FAILURE() << c.name << ": " << o.why;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "cks fuzz: " << passed << " passed, " << (n - passed - xfailed - xpassed) << " failed, " << xfailed
            << " expected failures, " << xpassed << " unexpected passes, " << secs << " s\n";
  for (const auto& [d, count] : xfail_by_defect) std::cerr << "  expected failure, defect " << d << ": " << count << "\n";
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
