// cks/files.hpp — writing output files safely and never leaving temporaries behind
// (src/common/files.cpp).
//
// Outputs (plans, models, checkpoints, shards, cache entries) are written to a new file created
// with mkstemp beside the target and renamed onto it: a reader never sees half a file, and a
// symlink (or any file) planted at a predictable "<out>.tmp" name is never written through.
// Temporaries (decompressed shards, merged registries, those output files before their rename)
// are registered while they exist: SIGINT, SIGTERM or SIGHUP removes them before the process
// dies of the signal, and so does a normal exit.
#pragma once
#include <string>
#include <string_view>

namespace cks {

// A registered temporary file: removed (with SQLite's -wal, -shm and -journal sidecars when
// `sqlite_sidecars`) when this object is destroyed, on exit, or by a stop signal once
// install_temp_cleanup() ran. Movable, not copyable.
class TempPath {
 public:
  TempPath() = default;
  explicit TempPath(std::string path, bool sqlite_sidecars = false);
  ~TempPath();
  TempPath(TempPath&& o) noexcept;
  TempPath& operator=(TempPath&& o) noexcept;
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::string& path() const { return path_; }
  bool empty() const { return path_.empty(); }
  // Stops tracking the file without removing it (it was renamed into place, say); returns it.
  std::string release();
  void remove();  // removes it now (idempotent)

 private:
  std::string path_;
  bool sidecars_ = false;
  int slot_ = -1;
};

// A new empty file "<dir>/<prefix>XXXXXX<suffix>" (mkstemps: created exclusively, mode 0600),
// registered. An empty `dir` means $TMPDIR, else /tmp. Throws Error.
TempPath make_temp(const std::string& dir, const std::string& prefix, const std::string& suffix = "",
                   bool sqlite_sidecars = false);
// The directory make_temp uses for an empty `dir`.
std::string temp_dir();

// Installs the SIGINT/SIGTERM/SIGHUP handler (remove every registered temporary, then re-raise
// the signal with its default action, so the exit status still says what stopped the process)
// and the exit hook. Idempotent; `cks` calls it first thing. A later handler (the collection
// monitor's clean stop) takes precedence while it is installed.
void install_temp_cleanup();
// Removes every registered temporary now (what the handler does). Async-signal-safe.
void remove_registered_temps() noexcept;
// Temporaries registered now (tests).
size_t registered_temps();

// An output written atomically: data goes to temp_path(), a new file "<dir>/.<name>.XXXXXX"
// beside the target; commit() fsyncs it, gives it the usual permissions (0666 less the umask),
// renames it onto the target and fsyncs the directory. rename() replaces a symlink at the
// target itself instead of writing through it. Destroyed uncommitted, the temp file is removed.
class AtomicOutput {
 public:
  // `sqlite_sidecars`: the temp file is an SQLite database (its -journal is removed with it).
  explicit AtomicOutput(std::string target, bool sqlite_sidecars = false);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_.path(); }
  int fd() const { return fd_; }
  void write(std::string_view data);  // appends to the temp file (throws Error)
  void commit();                      // replaces the target
  // Like commit() but refuses to replace an existing target (link(2): atomic, no race);
  // throws Error "'<target>' already exists" then.
  void commit_new();

 private:
  void finish_file();
  std::string target_;
  TempPath temp_;
  int fd_ = -1;
};

// AtomicOutput in one call.
void write_file_atomic(const std::string& target, std::string_view content);

}  // namespace cks
