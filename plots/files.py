"""Writing the charts and report.html whole or not at all: each goes to a temporary file in its own
folder and is renamed over the target once complete, so a full disk or a failure mid-write never
leaves a truncated PNG, SVG or HTML behind (the temporary file is removed). An output folder is made
or checked, never followed through a link; no output replaces one of the run's inputs, under any name
(protect()); file names made from data are bounded and distinct (file_stem()). No matplotlib here."""

import hashlib
import os
import pathlib
import signal
import tempfile

MAX_STEM = 100  # characters of a file name made from data (file systems allow 255 bytes)
_inputs = set()  # (st_dev, st_ino) of every file this run reads
_written = []  # what this run wrote, removed again if it is interrupted
_stems = {}  # folder -> file stems this run gave out there
_interrupted = False  # Ctrl-C seen, even where Python swallowed its KeyboardInterrupt


class OutputError(Exception):
    """An output that could not be written (full disk, read-only folder): the message names it."""


class InputClash(OutputError):
    """An output that would replace one of the run's inputs (the same file, under any name)."""


def protect(*paths):
    """Marks `paths` as inputs of this run: write_atomically refuses to replace them."""
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        _inputs.add((st.st_dev, st.st_ino))


def is_input(path):
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) in _inputs


def check_not_input(path):
    if is_input(path):
        raise InputClash(f"{path} is one of the inputs: it is not replaced (choose another --out)")


def output_folder(folder):
    """Makes `folder` or checks the one there: a real folder (a symbolic link is not followed: the
    outputs would land where it points) in which a file can be made. Returns whether it was made here;
    OutputError names the problem."""
    folder = pathlib.Path(folder)
    if folder.is_symlink():
        raise OutputError(
            f"{folder} is a symbolic link: the output folder is not followed through one "
            "(name the folder itself)"
        )
    made = not os.path.lexists(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create {folder}: {_why(e)}") from None
    if folder.is_symlink() or not folder.is_dir():  # made by someone else meanwhile
        raise OutputError(f"{folder} is not a folder")
    check_writable(folder)
    return made


def file_stem(folder, stem, key):
    """A file name stem for an output in `folder` made from data: at most MAX_STEM characters, not one
    this run already gave out there (two groups that slug alike), and not the name of an input. A short
    hash of `key` (the text the stem was made from) tells such names apart."""
    taken = _stems.setdefault(str(folder), set())
    digest = hashlib.sha256(str(key).encode("utf-8", "surrogateescape")).hexdigest()
    if len(stem) > MAX_STEM:
        stem = f"{stem[: MAX_STEM - 9]}-{digest[:8]}"
    candidate, n = stem, 0
    while candidate.lower() in taken or any(
        is_input(pathlib.Path(folder) / f"{candidate}{ext}") for ext in (".png", ".svg")
    ):
        n += 1
        candidate = f"{stem[: MAX_STEM - 9 - len(str(n))]}-{digest[:8]}" + (
            f"-{n}" if n > 1 else ""
        )
    taken.add(candidate.lower())  # case-insensitive file systems too
    return candidate


def _on_ctrl_c(signum, frame):
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def honour_ctrl_c():
    """Makes Ctrl-C stop the run even when it lands inside a callback Python runs for matplotlib (a
    weakref's): Python prints "Exception ignored" there and drops the KeyboardInterrupt, and the run
    would go on to exit 0. The flag set here is checked before every output is put in place."""
    signal.signal(signal.SIGINT, _on_ctrl_c)


def check_interrupted():
    """Raises KeyboardInterrupt when Ctrl-C was pressed, even if its first KeyboardInterrupt was lost."""
    if _interrupted:
        raise KeyboardInterrupt


def remove_written():
    """Removes what this run wrote (an interrupted run leaves no partial set of outputs)."""
    while _written:
        try:
            os.unlink(_written.pop())
        except OSError:
            pass


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
    check_not_input(path)
    mode = _new_file_mode(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"cannot write {path}: {_why(e)}") from None
    try:
        with os.fdopen(fd, "wb") as f:  # closing flushes: a write error shows here at the latest
            write(f)
        os.chmod(temporary, mode)
        check_interrupted()  # an interrupted run puts nothing more in place
        os.replace(temporary, path)
        _written.append(path)
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
