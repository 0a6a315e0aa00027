"""Where rttlab writes, and the promise it keeps there: it never deletes or overwrites a file it
did not write, and a reader never sees a half-written result.

- A **result directory** (``run --out``, ``reproduce --out``, `Result.save`) is filled in a new
  temporary directory beside the target and renamed into place. Each carries a marker file,
  `MARKER`, listing every file rttlab wrote there. An existing target is replaced only when asked
  (``force``), only when it is such a directory, and only when it holds nothing but what its
  marker lists; an empty directory is used as it is. Anything else is refused, naming the path.
- A **single file** (``sweep --out``) is written beside the target and renamed into place; an
  existing file is replaced only when asked.
- A **cache directory** carries a ``CACHEDIR.TAG`` (the Cache Directory Tagging convention, so
  backup tools skip it); rttlab adopts an existing directory only when it is empty, tagged, or
  holds nothing but cache entries.

Every check runs before any simulation, so a bad target costs nothing, and again just before the
rename. Problems are `OutputError` (a `ValueError`: the CLI prints it on one line, exit 2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

#: The marker file of a result directory: JSON with the list of files rttlab wrote there.
MARKER = ".rttlab-result"
#: The tag file of a cache directory (the Cache Directory Tagging convention: its signature line first).
CACHE_TAG = "CACHEDIR.TAG"
CACHE_TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is rttlab's cache of simulation results (safe to delete).\n"
#: A cache entry's file name: the hex SHA-256 of the scenario and simulator build.
CACHE_ENTRY = re.compile(r"^\.?[0-9a-f]{64}\.json(\..*)?$")


class OutputError(ValueError):
    """A place rttlab was asked to write to that it will not or cannot write to."""


def _real(option: str, out: str | Path) -> Path:
    """The absolute path of ``out`` (``~`` expanded), refusing a symbolic link."""
    path = Path(out).expanduser()
    if path.is_symlink():
        raise OutputError(f"{option} {out}: is a symbolic link; give the directory it points to, or a new path")
    return Path(os.path.realpath(path))


def _check_parent(option: str, out: str | Path, real: Path) -> None:
    """The nearest existing ancestor of ``real`` must be a directory rttlab may write into."""
    parent = real.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{option} {out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {out}: cannot write into {parent} (permission denied)")


def _listed(directory: Path) -> set[str] | None:
    """The files a result directory's marker lists (relative paths), or None without a marker."""
    try:
        return set(json.loads((directory / MARKER).read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _files(directory: Path) -> set[str]:
    """Every file and link below ``directory`` as relative paths (directories themselves left out)."""
    out = set()
    for root, dirs, files in os.walk(directory):
        for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]:
            out.add((Path(root) / name).relative_to(directory).as_posix())
    return out


def check_result_dir(out: str | Path, *, force: bool = False, option: str = "--out") -> Path:
    """Checks that a result directory may be written at ``out`` (see the module doc); returns its
    absolute path. ``option`` names the setting in errors."""
    real = _real(option, out)
    cwd = Path.cwd().resolve()
    if real == cwd or real in cwd.parents:
        raise OutputError(
            f"{option} {out}: is the current directory or one of its parents; give a new directory, e.g. {option} results/NAME"
        )
    if real.exists():
        if not real.is_dir():
            raise OutputError(
                f"{option} {out}: exists and is not a directory; rttlab writes a directory of results and never replaces a file"
            )
        if any(real.iterdir()):
            listed = _listed(real)
            if listed is None:
                raise OutputError(
                    f"{option} {out}: exists and is not an rttlab result (it has no {MARKER} file); rttlab never replaces what it did not write: give a new directory"
                )
            if not force:
                raise OutputError(
                    f"{option} {out}: holds an earlier rttlab result; pass --force to replace it, or give a new directory"
                )
            extra = sorted(_files(real) - listed - {MARKER})
            if extra:
                shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
                raise OutputError(
                    f"{option} {out}: holds files rttlab did not write ({shown}); move them away or give a new directory"
                )
    _check_parent(option, out, real)
    return real


def _remove_result(directory: Path) -> None:
    """Removes a result directory's listed files, then its directories once empty; whatever else
    turned up there is left in place."""
    listed = _listed(directory) or set()
    for rel in listed | {MARKER}:
        with suppress(FileNotFoundError):
            (directory / rel).unlink()
    for root, dirs, _ in sorted(os.walk(directory), key=lambda w: -len(w[0])):
        for d in dirs:
            with suppress(OSError):
                (Path(root) / d).rmdir()
    with suppress(OSError):
        directory.rmdir()


@contextmanager
def result_dir(out: str | Path, *, force: bool = False, option: str = "--out") -> Iterator[Path]:
    """Yields a new temporary directory beside ``out`` to fill. On success it gets its marker and
    takes the place of ``out`` (replacing an earlier rttlab result only with ``force``); on error
    it is removed, so ``out`` is either the complete new result or what it was before."""
    real = check_result_dir(out, force=force, option=option)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent))
    except OSError as e:
        raise OutputError(f"{option} {out}: cannot create it: {e.strerror or e}") from None
    old = None
    try:
        yield tmp
        files = sorted(_files(tmp))
        (tmp / MARKER).write_text(json.dumps({"written_by": "rttlab", "files": files}, indent=1) + "\n")
        check_result_dir(out, force=force, option=option)
        if real.exists() and not any(real.iterdir()):
            real.rmdir()
        if real.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".old", dir=real.parent))
            os.replace(real, old / real.name)
        os.replace(tmp, real)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / real.name).exists() and not real.exists():
            os.replace(old / real.name, real)  # the earlier result goes back where it was
            old.rmdir()
        raise
    if old is not None:
        # The new result is in place; the earlier one goes, except anything that turned up in it.
        _remove_result(old / real.name)
        with suppress(OSError):
            old.rmdir()


def check_file(out: str | Path, *, force: bool = False, option: str = "--out") -> Path:
    """Checks that a single result file may be written at ``out``; returns its absolute path."""
    real = _real(option, out)
    if real.exists():
        if real.is_dir():
            raise OutputError(f"{option} {out}: is a directory; give a file name")
        if not force:
            raise OutputError(f"{option} {out}: exists; pass --force to replace it, or give a new file name")
    _check_parent(option, out, real)
    return real


def write_file(out: str | Path, write: Callable[[Path], None], *, force: bool = False, option: str = "--out") -> Path:
    """Calls ``write(tmp)`` on a temporary file beside ``out``, then renames it into place (see
    `check_file`); the temporary file never outlives an error."""
    real = check_file(out, force=force, option=option)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
        os.close(fd)
    except OSError as e:
        raise OutputError(f"{option} {out}: cannot create it: {e.strerror or e}") from None
    tmp = Path(name)
    try:
        write(tmp)
        check_file(out, force=force, option=option)
        os.replace(tmp, real)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return real


def atomic_write(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` (in a directory rttlab owns) through a temporary file renamed
    into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _ours(cache: Path) -> bool:
    """Whether ``cache`` carries rttlab's cache tag."""
    try:
        return "rttlab" in (cache / CACHE_TAG).read_text()
    except OSError:
        return False


def prepare_cache(cache: str | Path, *, option: str = "--cache") -> Path:
    """Checks (and creates) a cache directory; returns its absolute path. Refuses a file, a link,
    or a directory holding anything but cache entries, unless it carries rttlab's tag."""
    real = _real(option, cache)
    try:
        if real.exists():
            if not real.is_dir():
                raise OutputError(f"{option} {cache}: exists and is not a directory")
            if not _ours(real):
                foreign = sorted(p.name for p in real.iterdir() if not CACHE_ENTRY.match(p.name))
                if foreign:
                    raise OutputError(
                        f"{option} {cache}: holds files that are not rttlab cache entries ({', '.join(foreign[:3])}); give an empty or new directory"
                    )
        else:
            _check_parent(option, cache, real)
            real.mkdir(parents=True)
        if not _ours(real):
            atomic_write(real / CACHE_TAG, CACHE_TAG_TEXT)
    except OSError as e:
        raise OutputError(f"{option} {cache}: cannot use it: {e.strerror or e}") from None
    return real
