// Files offloadbench reads and writes, handled so that a careless path can do no harm: inputs must
// be regular files of bounded size (a FIFO would hang, /dev/zero never ends); outputs are written
// to a temporary file beside the target and renamed over it, and only over a regular file or a new
// path — never over a device node, FIFO, symbolic link or folder (as root, a rename replaces
// /dev/full).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace offloadbench {

// A path that cannot be used as given (bad input: exit code 2). The message names the path.
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest input offloadbench reads: 128 MiB, about 95,000 rows as `run` writes them (a full
// sweep of one GPU is about 50 MB). Every reader holds a whole file as a JSON tree of 6-10x its
// size, so this keeps the heaviest command, `compare` of two such files, within about 10 s and 2
// GiB on two cores (two 121 MiB files compare in 6 s and 1.2 GB).
inline constexpr std::uint64_t kMaxInputBytes = std::uint64_t{128} << 20;

// The whole content of a regular file of at most `max_bytes`. Throws FileError naming the path and
// the problem (missing, a directory, not a regular file, too large).
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes = kMaxInputBytes);

// Throws FileError unless `path` can be written by write_file_atomically: it is a regular file or
// does not exist yet, in an existing folder that can be written to. `option` names it in the
// message.
void check_output_path(const std::string& path, const std::string& option);

// Writes `text` to a new temporary file beside `path`, then renames it over `path`, so a reader
// never sees half a file. Checks the target with check_output_path first (FileError); an I/O
// failure (a full disk) throws std::runtime_error. The temporary file never outlives a failure.
void write_file_atomically(const std::string& path, const std::string& text);

// Throws FileError when output `option` names the same file as `other` (called `what` in the
// message): the same device and inode, so also through a symbolic or hard link, or, when neither
// exists yet, the same name in the same folder. Writing it would destroy the input it is made from.
void check_not_same_file(const std::string& output, const std::string& option,
                         const std::string& other, const std::string& what);

// Creates `path` as a new file (mode 0600) and returns its descriptor (close-on-exec). O_EXCL and
// O_NOFOLLOW: never opens a file or symbolic link that someone else put there first. Throws
// FileError.
int create_new_file(const std::string& path);

}  // namespace offloadbench

namespace offloadbench {

// An exclusive lock that says "a process is writing <path>": held on <path>.lock (the results file
// itself is replaced by rename, so it cannot carry a lock). A second writer gets FileError at once.
// The lock file is removed on release; one left by a killed process is stale and taken over, and so
// are the temporary files a killed writer left beside <path> (<path>.tmp.XXXXXX,
// <path>.probe.XXXXXX).
class OutputLock {
 public:
  explicit OutputLock(const std::string& path);
  ~OutputLock() { release(); }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  void release();  // async-signal-safe: unlink and close only

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace offloadbench

namespace offloadbench {

// A new folder of our own (mkdtemp: an unpredictable name, mode 0700) in the system's temporary
// folder
// ($TMPDIR or /tmp), so that no other user can plant files or links in it. Throws FileError.
std::string make_temporary_folder(const std::string& prefix);

// A new folder "<parent>/<prefix>-<our pid>-XXXXXX" (mkdtemp). A run killed with SIGKILL cannot
// remove its own folder, so first the folders of that pattern in `parent` that this user owns and
// whose process no longer exists are removed. Throws FileError.
std::string make_owned_folder(const std::string& parent, const std::string& prefix);

// A new, empty file of our own in the system's temporary folder ($TMPDIR or /tmp), removed when
// this object goes: for data one command hands to another without touching the user's files.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& prefix, const std::string& suffix);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace offloadbench
