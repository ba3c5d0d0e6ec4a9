"""The compile cache runs only what padconf compiled: an entry is used only when it
carries an HMAC under the user's key, which lives outside the cache folder; a key file padconf
cannot keep secret turns the cache off; ``padconf compile-cache --clear`` deletes only padconf's
own entries, in a folder padconf tagged.

The variable names are spelled out, not imported, so that each test runs against a padconf
without these defences and fails on what it does, not on an import."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padconf.adapters import compile_cache
from padconf.adapters.compile_cache import MAGIC, CompileCache, cache_key
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.execution.worker import Worker
from padconf.judging.verdicts import Verdict, judge

KEY_ENV = "PADCONF_COMPILE_CACHE_KEY"


@pytest.fixture(autouse=True)
def key_file(tmp_path, monkeypatch):
    """A key file of the test's own, read afresh (the cache reads one once a process)."""
    path = tmp_path / "config" / "compile-cache.key"
    monkeypatch.setenv(KEY_ENV, str(path))
    monkeypatch.setattr(compile_cache, "_KEYS", {}, raising=False)
    return path


def _entries(root: Path) -> list[Path]:
    return sorted(root.glob("*/*.bin"))


def _with_checksum(payload: bytes) -> bytes:
    """An entry as anyone can make one: the header and the payload's SHA-256."""
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


# ---------------------------------------------------------------- (a) a planted entry is never used


@pytest.mark.parametrize("attack", ["payload replaced, checksum recomputed", "another key's entry moved here",
                                    "signed with another key file", "a link to a whole entry elsewhere"])
def test_an_entry_padconf_did_not_write_under_its_key_is_rebuilt_never_returned(tmp_path, monkeypatch, key_file,
                                                                              attack):
    root = tmp_path / "cache"
    cache = CompileCache(root)
    key, other = cache_key("graph"), cache_key("another graph")
    assert cache.fetch(key, lambda: b"\x7fELF compiled by padconf", 60) == b"\x7fELF compiled by padconf"
    (path,) = _entries(root)
    planted = b"M\x7fELF someone else's shared object"
    if attack == "payload replaced, checksum recomputed":
        path.write_bytes(_with_checksum(planted))
    elif attack == "another key's entry moved here":
        cache.fetch(other, lambda: b"\x7fELF another model", 60)
        path.write_bytes(next(p for p in _entries(root) if p.stem == other).read_bytes())
    elif attack == "signed with another key file":  # e.g. a CI cache restored from another runner
        monkeypatch.setenv(KEY_ENV, str(tmp_path / "theirs.key"))
        CompileCache(root).put(key, planted)
        monkeypatch.setenv(KEY_ENV, str(key_file))
    else:
        outside = tmp_path / "elsewhere.bin"
        shutil.copyfile(path, outside)  # an entry that verifies, outside the folder
        path.unlink()
        path.symlink_to(outside)
    fresh = CompileCache(root)
    assert fresh.get(key) is None
    assert fresh.fetch(key, lambda: b"rebuilt", 60) == b"rebuilt"
    assert CompileCache(root).fetch(key, lambda: pytest.fail("built again"), 60) == b"rebuilt"  # overwritten
    assert not path.is_symlink()


def test_an_entry_of_the_earlier_format_is_a_miss(tmp_path):
    """Entries of version 2 carried a SHA-256 anyone can compute: the header's version went up, so
    such an entry is compiled again (and overwritten), never read."""
    key = cache_key("graph")
    path = tmp_path / key[:2] / f"{key}.bin"
    path.parent.mkdir()
    payload = b"M\x7fELF a module"
    path.write_bytes(b"padconf-compile-cache 2\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert CompileCache(tmp_path).fetch(key, lambda: b"rebuilt", 60) == b"rebuilt"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("tvm") is None or shutil.which("cc") is None,
                    reason="needs padconf[tvm] and a C compiler")
def test_a_shared_object_planted_in_a_tvm_entry_is_never_loaded(tmp_path, monkeypatch):
    """A real attack: TVM's entry for a case holds a shared library that padconf dlopens. One
    whose constructor writes a file, put in its place with the checksum recomputed, is not
    loaded by a later run (the file never appears): the case is compiled again and passes."""
    root = tmp_path / "cache"
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(root))
    source = tmp_path / "planted.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\n'
                      '__attribute__((constructor)) static void planted(void) {\n'
                      '  const char *to = getenv("PADCONF_TEST_PLANTED"); FILE *f = to ? fopen(to, "w") : 0;\n'
                      '  if (f) { fputs("ran", f); fclose(f); }\n}\n')
    library = tmp_path / "planted.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, capture_output=True)
    proof = tmp_path / "loaded-anyway"  # the trap works: loading the library writes its file
    subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(library)!r})"], check=True,
                   env={**os.environ, "PADCONF_TEST_PLANTED": str(proof)})
    assert proof.read_text() == "ran"

    case = classify(Case(spec="onnx/Pad-19", data=np.arange(6, dtype=np.float32).reshape(2, 3), pads=[1, 0, 0, 2],
                         constant_value=np.float32(7)))

    def run_alone():
        worker = Worker("tvm")
        try:
            return worker.run_alone(case, "initializers")
        finally:
            worker.close()

    outcome, status = run_alone()
    assert status == "ok" and judge(case, outcome).verdict == Verdict.PASS
    (module,) = [p for p in _entries(root) if CompileCache(root).get(p.stem)[:1] == b"M"]
    module.write_bytes(_with_checksum(b"M" + library.read_bytes()))
    ran = tmp_path / "ran"
    monkeypatch.setenv("PADCONF_TEST_PLANTED", str(ran))  # the worker inherits it
    outcome, status = run_alone()
    assert not ran.exists(), "the planted library was loaded"
    assert status == "ok" and judge(case, outcome).verdict == Verdict.PASS


# ---------------------------------------------------------------- (c) the key file


def _off_because(root: Path, words: str) -> None:
    cache = CompileCache(root)
    cache.put(cache_key("graph"), b"compiled")
    assert cache.get(cache_key("graph")) is None
    assert not _entries(root)  # nothing written either
    why = cache.why_off()
    assert words in why and "the compile cache is off" in why and "\n" not in why


def test_a_key_file_open_to_others_turns_the_cache_off(tmp_path, key_file):
    key_file.parent.mkdir()
    key_file.write_bytes(os.urandom(32))
    key_file.chmod(0o644)
    _off_because(tmp_path / "cache", "open to group or others")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("tvm") is None, reason="TVM is not installed")
def test_a_run_says_when_a_key_file_turned_its_compile_cache_off(tmp_path, key_file, monkeypatch, capsys):
    key_file.parent.mkdir()
    key_file.write_bytes(os.urandom(32))
    key_file.chmod(0o644)
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    assert main(["run", "--runtime", "tvm", "--spec", "onnx/Pad-19", "--max-examples", "1", "--out", str(out)]) == 0
    said = "tvm: compiles everything again:"
    assert said in capsys.readouterr().out and said in (out / "summary.md").read_text()


def test_a_key_file_that_is_a_link_turns_the_cache_off(tmp_path, key_file):
    """Even a link to a good key: a link in the config folder may lead anywhere someone chose."""
    good = tmp_path / "good.key"
    good.write_bytes(os.urandom(32))
    good.chmod(0o600)
    key_file.parent.mkdir()
    key_file.symlink_to(good)
    _off_because(tmp_path / "cache", "symbolic link")


@pytest.mark.parametrize("kind", ["fifo", "folder", "short", "another user's"])
def test_a_key_file_that_is_no_key_of_ours_turns_the_cache_off(tmp_path, key_file, kind):
    key_file.parent.mkdir()
    if kind == "fifo":  # opened without waiting for a writer
        os.mkfifo(key_file, 0o600)
    elif kind == "folder":
        key_file.mkdir(0o700)
    else:
        key_file.write_bytes(b"short" if kind == "short" else os.urandom(32))
        key_file.chmod(0o600)
    if kind == "another user's":
        if os.geteuid() != 0:
            pytest.skip("giving a file away takes root")
        os.chown(key_file, 65534, 65534)
    _off_because(tmp_path / "cache", {"fifo": "not a regular file", "folder": "not a regular file",
                                      "short": "holds 5 bytes", "another user's": "owned by uid 65534"}[kind])


def test_a_missing_key_file_is_made_private_and_used_outside_the_cache(tmp_path, key_file):
    root = tmp_path / "cache"
    cache = CompileCache(root)
    cache.put(cache_key("graph"), b"compiled")
    assert cache.get(cache_key("graph")) == b"compiled" and cache.why_off() is None
    mode = key_file.stat().st_mode
    assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o600 and len(key_file.read_bytes()) == 32
    assert key_file.read_bytes() not in b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    assert not [p for p in key_file.parent.iterdir() if p != key_file]  # no temporary file left


def test_the_key_is_read_once_a_process(tmp_path, key_file):
    """Workers are forks that inherit what their zygote read: a key file changed afterwards
    changes nothing for a process that has read it (read again, this one would be refused)."""
    root = tmp_path / "cache"
    CompileCache(root).put(cache_key("graph"), b"compiled")
    key_file.chmod(0o644)
    assert CompileCache(root).get(cache_key("graph")) == b"compiled"


_READ_UNDER_A_CAP = """
import resource, sys
from pathlib import Path
from padconf.adapters.compile_cache import CompileCache, cache_key
cache = CompileCache(Path(sys.argv[1]))
cache.put(cache_key("graph"), b"compiled")
size = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize"))
resource.setrlimit(resource.RLIMIT_AS, (size + (64 << 20), resource.RLIM_INFINITY))
print(cache.get(cache_key("graph")) == b"compiled")
"""


def test_an_entry_is_read_in_the_memory_its_size_takes(tmp_path):
    """A worker reads entries under its address-space cap: reading one kilobyte-sized entry took
    the entry bound's 256 MiB first (read(n) reserves n bytes), a MemoryError in a worker with
    less left, which IREE's adapter then recorded as IREE's refusal."""
    done = subprocess.run([sys.executable, "-c", _READ_UNDER_A_CAP, str(tmp_path / "cache")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, KEY_ENV: os.environ[KEY_ENV]})
    assert done.returncode == 0 and done.stdout.split() == ["True"], done.stderr[-2000:]


# ---------------------------------------------------------------- (b) --clear


def test_clear_refuses_a_folder_padconf_did_not_tag_and_deletes_nothing(tmp_path, monkeypatch, capsys):
    """``PADCONF_COMPILE_CACHE=$HOME``: two-letter folders of files without a suffix are someone's
    data. Refused in one line, exit 2, every file kept."""
    home = tmp_path / "home"
    for name, text in {"ab/notes": "mine", "cd/draft": "mine too", ".bashrc": "alias ll='ls -l'"}.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(home))
    capsys.readouterr()
    assert main(["compile-cache", "--clear"]) == 2
    out, err = capsys.readouterr()
    assert "deleted from" not in out and len(err.strip().splitlines()) == 1 and "CACHEDIR.TAG" in err
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before


def test_clear_deletes_exactly_padconfs_entries_and_says_how_many(tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    cache = CompileCache(root)
    keys = [cache_key(str(i)) for i in range(3)]
    for key in keys:
        cache.put(key, b"compiled " + key.encode())
    assert (root / "CACHEDIR.TAG").is_file()  # padconf tagged the folder it made
    old = cache_key("an entry of an earlier format")  # padconf's too: deleted and counted
    (root / old[:2]).mkdir(exist_ok=True)
    (root / old[:2] / f"{old}.bin").write_bytes(b"padconf-compile-cache 2\n" + b"0" * 64 + b"\nM")
    stranger = cache_key("a stranger's")
    used = {k[:2] for k in [*keys, old, stranger]}
    free = iter(sorted({f"{i:02x}" for i in range(256)} - used))
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copyfile(root / keys[0][:2] / f"{keys[0]}.bin", outside / f"{keys[0]}.bin")  # a whole entry, outside
    foreign, linked = next(free), next(free)
    theirs = {
        f"{foreign}/notes": b"someone's data",  # a two-letter folder, a file without a suffix
        f"{foreign}/{foreign}{'0' * 62}.bin": b"named like an entry, not one",
        f"{keys[1][:2]}/README": b"beside an entry",
        f"{stranger[:2]}/{stranger}.bin": b"not headed as an entry",
    }
    for name, data in theirs.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(data)
    (root / linked).symlink_to(outside, target_is_directory=True)  # a two-letter folder that is a link
    link = root / keys[2][:2] / f"{keys[2][:2]}{'e' * 62}.bin"
    link.symlink_to(outside / f"{keys[0]}.bin")  # an entry's name, a link to a whole entry
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(root))
    capsys.readouterr()
    assert main(["compile-cache"]) == 0
    assert ": 4 entries," in capsys.readouterr().out
    assert main(["compile-cache", "--clear"]) == 0
    assert capsys.readouterr().out.startswith("4 entries deleted from ")
    for name, data in theirs.items():
        assert (root / name).read_bytes() == data, name
    assert (outside / f"{keys[0]}.bin").is_file() and (root / linked).is_symlink() and link.is_symlink()
    left = [Path(top, f) for top, _, files in os.walk(root) for f in files]  # links to folders not followed
    assert not [p for p in left if not p.is_symlink() and p.read_bytes().startswith(b"padconf-compile-cache")]
    assert main(["compile-cache", "--clear"]) == 0
    assert capsys.readouterr().out.startswith("0 entries deleted from ")
