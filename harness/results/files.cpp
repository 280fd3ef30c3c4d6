#include "harness/results/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace offloadbench {

namespace {

// Closes a file descriptor on every path out of a function.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

std::string parent_folder(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why `path` may not be replaced by a rename ("" when it may): only a regular file or nothing.
std::string target_problem(const std::string& path) {
  if (path.empty()) return "is empty";
  if (path.back() == '/') return "names a folder, not a file";
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return std::strerror(errno);  // ENOTDIR: a part of the folder path is a file
    struct stat parent {};
    const std::string folder = parent_folder(path);
    if (stat(folder.c_str(), &parent) != 0)
      return fmt::format("folder '{}': {}", folder, std::strerror(errno));
    if (!S_ISDIR(parent.st_mode)) return fmt::format("'{}' is not a folder", folder);
    return "";
  }
  if (S_ISLNK(st.st_mode)) return "is a symbolic link (give the file it points to)";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode))
    return "is not a regular file (a device, FIFO or socket); it is left alone";
  return "";
}

// Device and inode of `path` (links followed); false when it does not exist.
bool identity(const std::string& path, dev_t& dev, ino_t& ino) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  dev = st.st_dev;
  ino = st.st_ino;
  return true;
}

std::string temporary_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

mode_t new_file_mode(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0)
    return st.st_mode & 07777;  // keep the replaced file's permissions
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  if (path.empty()) throw FileError("'': empty file name");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  FileDescriptor file{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) throw FileError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(file.fd, &st) != 0) throw FileError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw FileError(fmt::format("{}: is a directory, not a results file", path));
  if (!S_ISREG(st.st_mode))
    throw FileError(fmt::format("{}: is not a regular file (a device, FIFO or socket)", path));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw FileError(fmt::format("{}: is {} bytes, more than the {} bytes offloadbench reads", path,
                                st.st_size, max_bytes));
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = read(file.fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw FileError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    if (got == 0) break;  // the file shrank while we read it
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return text;
}

void check_output_path(const std::string& path, const std::string& option) {
  if (auto problem = target_problem(path); !problem.empty())
    throw FileError(fmt::format("{} '{}': {}", option, path, problem));
  // Prove now that the folder takes a new file, rather than fail after the work is done.
  std::string probe = fmt::format("{}.probe.XXXXXX", path);
  FileDescriptor file{mkstemp(probe.data())};
  if (file.fd < 0)
    throw FileError(
        fmt::format("{} '{}': cannot write there: {}", option, path, std::strerror(errno)));
  unlink(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  if (auto problem = target_problem(path); !problem.empty())
    throw FileError(fmt::format("'{}': {}", path, problem));
  std::string temporary = fmt::format("{}.tmp.XXXXXX", path);
  FileDescriptor file{mkstemp(temporary.data())};
  if (file.fd < 0)
    throw std::runtime_error(
        fmt::format("cannot write beside '{}': {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    const int err = errno;
    unlink(temporary.c_str());
    throw std::runtime_error(fmt::format("{} '{}': {}", what, path, std::strerror(err)));
  };
  fchmod(file.fd,
         new_file_mode(path));  // mkstemp makes 0600; a results file is as readable as any other
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = write(file.fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) fail("writing");
    done += static_cast<std::size_t>(wrote);
  }
  if (close(file.fd) != 0) {
    file.fd = -1;
    fail("writing");
  }
  file.fd = -1;
  if (rename(temporary.c_str(), path.c_str()) != 0) fail("cannot replace");
}

void check_not_same_file(const std::string& output, const std::string& option,
                         const std::string& other, const std::string& what) {
  dev_t out_dev{}, other_dev{};
  ino_t out_ino{}, other_ino{};
  const bool out_exists = identity(output, out_dev, out_ino),
             other_exists = identity(other, other_dev, other_ino);
  bool same = out_exists && other_exists && out_dev == other_dev && out_ino == other_ino;
  if (!out_exists &&
      !other_exists) {  // two new paths: the same name in the same folder ("x" and "./x")
    const auto name = [](const std::string& p) { return p.substr(p.rfind('/') + 1); };
    same = name(output) == name(other) && identity(parent_folder(output), out_dev, out_ino) &&
           identity(parent_folder(other), other_dev, other_ino) && out_dev == other_dev &&
           out_ino == other_ino;
  }
  if (same)
    throw FileError(fmt::format("{} '{}' is the same file as {} '{}': writing it would destroy it",
                                option, output, what, other));
}

int create_new_file(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw FileError(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
  return fd;
}

}  // namespace offloadbench

namespace offloadbench {

namespace {

// What a killed writer leaves beside `path`: write_file_atomically's <path>.tmp.XXXXXX (one held
// 203 MB) and check_output_path's <path>.probe.XXXXXX, X being mkstemp's six letters and digits.
// Only the holder of the path's lock calls this, so no other writer is using them.
void remove_stale_temporaries(const std::string& path) {
  const std::string folder = parent_folder(path), name = path.substr(path.rfind('/') + 1);
  DIR* dir = opendir(folder.c_str());
  if (!dir) return;
  while (const dirent* entry = readdir(dir)) {
    const std::string found = entry->d_name;
    for (const std::string kind : {".tmp.", ".probe."}) {
      const std::string prefix = name + kind;
      if (found.size() != prefix.size() + 6 || found.compare(0, prefix.size(), prefix) != 0)
        continue;
      if (!std::all_of(found.begin() + static_cast<std::ptrdiff_t>(prefix.size()), found.end(),
                       [](unsigned char c) { return std::isalnum(c) != 0; }))
        continue;
      const std::string stale = folder + "/" + found;
      struct stat st {};
      if (lstat(stale.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        unlink(stale.c_str());  // never a link's target
    }
  }
  closedir(dir);
}

}  // namespace

OutputLock::OutputLock(const std::string& path) : lock_path_(path + ".lock") {
  // Retry once: the file we opened may have been unlinked by its holder between our open and flock.
  for (int attempt = 0; attempt < 2; ++attempt) {
    // O_NOFOLLOW: a link planted at <path>.lock must not make us create or lock the file it names.
    fd_ = open(lock_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw FileError(
          fmt::format("cannot create the lock '{}': {}", lock_path_, std::strerror(errno)));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      close(fd_);
      fd_ = -1;
      throw FileError(fmt::format("another offloadbench run is writing '{}' (it holds '{}')", path,
                                  lock_path_));
    }
    struct stat held {
    }, named{};
    if (fstat(fd_, &held) == 0 && stat(lock_path_.c_str(), &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      remove_stale_temporaries(path);
      return;
    }
    close(fd_);
    fd_ = -1;
  }
  throw FileError(fmt::format("cannot lock '{}': it keeps being replaced", lock_path_));
}

void OutputLock::release() {
  if (fd_ < 0) return;
  unlink(lock_path_
             .c_str());  // while still holding it, so no second writer locks a file about to vanish
  close(fd_);
  fd_ = -1;
}

}  // namespace offloadbench

namespace offloadbench {

namespace {

// "<prefix>-<pid>-XXXXXX" → pid, or 0 when `name` is not such a folder name.
pid_t owner_pid(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size() + 1, prefix + "-") != 0)
    return 0;
  const auto digits = name.substr(prefix.size() + 1);
  const auto dash = digits.find('-');
  if (dash == 0 || dash == std::string::npos || digits.size() - dash - 1 != 6) return 0;
  pid_t pid = 0;
  for (std::size_t i = 0; i < dash; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(digits[i])) || pid > 100000000) return 0;
    pid = pid * 10 + (digits[i] - '0');
  }
  return pid;
}

// Folders "<prefix>-<pid>-XXXXXX" in `folder` that this user owns (not links) and whose process is
// gone.
void remove_abandoned_folders(const std::string& folder, const std::string& prefix) {
  DIR* dir = opendir(folder.c_str());
  if (!dir) return;
  std::vector<std::string> abandoned;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    const pid_t pid = owner_pid(name, prefix);
    if (pid <= 0 || pid == getpid()) continue;
    const auto path = folder + "/" + name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to ask about: leave it
    abandoned.push_back(path);
  }
  closedir(dir);
  for (const auto& path : abandoned) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
}

}  // namespace

std::string make_owned_folder(const std::string& parent, const std::string& prefix) {
  const std::string folder = parent.empty() ? "." : parent;
  remove_abandoned_folders(folder, prefix);
  std::string pattern = fmt::format("{}/{}-{}-XXXXXX", folder, prefix, getpid());
  if (!mkdtemp(pattern.data()))
    throw FileError(fmt::format("cannot make a folder in '{}': {}", folder, std::strerror(errno)));
  return pattern;
}

std::string make_temporary_folder(const std::string& prefix) {
  return make_owned_folder(temporary_root(), prefix);
}

TemporaryFile::TemporaryFile(const std::string& prefix, const std::string& suffix) {
  std::string pattern = fmt::format("{}/{}-XXXXXX{}", temporary_root(), prefix, suffix);
  const int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("cannot make a temporary file {}: {}", pattern, std::strerror(errno)));
  ::close(fd);
  path_ = pattern;
}

TemporaryFile::~TemporaryFile() { ::unlink(path_.c_str()); }

}  // namespace offloadbench
