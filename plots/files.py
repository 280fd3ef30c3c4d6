"""Writing the charts and report.html whole or not at all: each goes to a temporary file in its own
folder and is renamed over the target once complete, so a full disk or a failure mid-write never
leaves a truncated PNG, SVG or HTML behind (the temporary file is removed). No matplotlib here."""
import os
import pathlib
import tempfile


class OutputError(Exception):
    """An output that could not be written (full disk, read-only folder): the message names it."""


def _new_file_mode(path):
    """The target's own mode when it exists, else what a plain open() would give (0666 less the umask)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _why(error):
    return error.strerror or str(error) or type(error).__name__


def check_writable(folder):
    """Raises OutputError unless a new file can be made in `folder` (before any work is done)."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"cannot write in {folder}: {_why(e)}") from None
    os.close(fd)
    os.unlink(probe)


def write_atomically(path, write):
    """Calls write(f) with a new binary file beside `path`, then renames it over `path`. An OSError
    (ENOSPC, EFBIG, EROFS, ...) becomes OutputError naming `path`; any failure removes the temporary
    file and leaves whatever was at `path` before untouched."""
    path = pathlib.Path(path)
    mode = _new_file_mode(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"cannot write {path}: {_why(e)}") from None
    try:
        with os.fdopen(fd, "wb") as f:  # closing flushes: a write error shows here at the latest
            write(f)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {path}: {_why(e)}") from None
        raise
    return path


def write_text_atomically(path, text):
    return write_atomically(path, lambda f: f.write(text.encode("utf-8")))
