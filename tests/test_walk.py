"""The folder walk over real trees: ignore rules, skipped folders, symlinks, odd names."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from llmem.code.walk import Skipped, WalkResult, is_probably_binary, walk_workspace

REASONS = {
    "gitignored",
    "llmemignored",
    "vcs-dir",
    "dependency-dir",
    "virtualenv",
    "build-output",
    "binary",
    "too-large",
    "unsupported-language",
    "symlink-outside",
    "symlink-dir",
    "unreadable",
    "hidden-dir",
}


def _write(path: Path, text: str = "x = 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _files(result: WalkResult) -> list[str]:
    return [f.rel_path for f in result.files]


def _skipped(result: WalkResult) -> dict[str, str]:
    return {s.rel_path: s.reason for s in result.skipped}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace with everything a folder parse must tell apart."""
    root = tmp_path / "my project ü"
    _write(root / ".gitignore", "*_pb2.py\n/secret/\ngenerated/\nlogs\n!generated/keep.py\n*.log\n")
    _write(root / ".git" / "info" / "exclude", "scratch.py\n")
    _write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(root / "app.py")
    _write(root / "debug.log", "noise\n")  # the project's own rule wins over "unsupported-language"
    _write(root / "api_pb2.py")
    _write(root / "scratch.py")
    _write(root / "secret" / "keys.py")
    _write(root / "generated" / "keep.py")  # a negation cannot re-include a file of an ignored folder
    _write(root / "logs" / "today.py")
    _write(root / "sub" / ".gitignore", "!keep_pb2.py\nlocal_*.py\ncache/x.py\n")
    _write(root / "sub" / "keep_pb2.py")
    _write(root / "sub" / "drop_pb2.py")
    _write(root / "sub" / "local_settings.py")
    _write(root / "sub" / "cache" / "x.py")
    _write(root / "sub" / "cache" / "y.py")
    _write(root / "sub" / "secret" / "fine.py")  # /secret/ is anchored to the root
    _write(root / "sub" / "generated" / "gone.py")
    _write(root / "other" / "local_settings.py")  # sub's rules do not reach here
    _write(root / "node_modules" / "lib" / "index.js")
    _write(root / "web" / "bower_components" / "x.js")
    _write(root / "myenv" / "pyvenv.cfg", "home = /usr/bin\n")
    _write(root / "myenv" / "lib" / "site.py")
    _write(root / ".venv" / "bin" / "activate", "# activate\n")
    _write(root / "venv" / "Scripts" / "activate", "rem\n")
    _write(root / "env" / "config.py")  # a plain source folder called env stays
    for name in ("build", "dist", "target", "out", "__pycache__", ".next", "coverage", ".tox", "pkg.egg-info"):
        _write(root / name / "gen.py")
    for name in (".idea", ".vscode", ".llmem"):
        _write(root / name / "stuff.js")
    _write(root / "docs" / "README.md", "# docs\n")
    _write(root / "docs" / "logo.png", "not really a png")
    _write(root / "my folder" / "ünïcode file.py")
    _write(root / "my folder" / "with space.ts", "export const A = 1;\n")
    (root / "big.py").write_bytes(b"#" * 1_000_001)
    (root / "exactly_limit.py").write_bytes(b"#" * 1_000_000)
    (root / "nul.py").write_bytes(b"x = 1\n\x00\x00")
    return root


def test_walk_sorts_every_entry_into_files_or_skipped_with_a_reason(project: Path) -> None:
    result = walk_workspace(project)
    assert _files(result) == [
        "app.py",
        "docs/README.md",
        "env/config.py",
        "exactly_limit.py",
        "my folder/with space.ts",
        "my folder/ünïcode file.py",
        "nul.py",
        "other/local_settings.py",
        "sub/cache/y.py",
        "sub/keep_pb2.py",
        "sub/secret/fine.py",
    ]
    assert _skipped(result) == {
        ".git/": "vcs-dir",
        ".gitignore": "unsupported-language",
        ".idea/": "hidden-dir",
        ".llmem/": "hidden-dir",
        ".next/": "build-output",
        ".tox/": "build-output",
        ".venv/": "virtualenv",
        ".vscode/": "hidden-dir",
        "__pycache__/": "build-output",
        "api_pb2.py": "gitignored",
        "big.py": "too-large",
        "build/": "build-output",
        "coverage/": "build-output",
        "debug.log": "gitignored",
        "dist/": "build-output",
        "docs/logo.png": "binary",
        "generated/": "gitignored",
        "logs/": "gitignored",
        "myenv/": "virtualenv",
        "node_modules/": "dependency-dir",
        "out/": "build-output",
        "pkg.egg-info/": "build-output",
        "scratch.py": "gitignored",
        "secret/": "gitignored",
        "sub/.gitignore": "unsupported-language",
        "sub/cache/x.py": "gitignored",
        "sub/drop_pb2.py": "gitignored",
        "sub/generated/": "gitignored",
        "sub/local_settings.py": "gitignored",
        "target/": "build-output",
        "venv/": "virtualenv",
        "web/bower_components/": "dependency-dir",
    }


def test_entries_carry_absolute_paths_and_stat(project: Path) -> None:
    result = walk_workspace(project)
    for entry in result.files:
        assert entry.abs_path == project / entry.rel_path
        stat = entry.abs_path.stat()
        assert (entry.size, entry.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        assert "\\" not in entry.rel_path
    assert [f.rel_path for f in result.files] == sorted(f.rel_path for f in result.files)
    assert [s.rel_path for s in result.skipped] == sorted(s.rel_path for s in result.skipped)


def test_skipped_folders_are_reported_once_not_file_by_file(project: Path) -> None:
    result = walk_workspace(project)
    folders = [s.rel_path for s in result.skipped if s.rel_path.endswith("/")]
    everything = [s.rel_path for s in result.skipped] + _files(result)
    for folder in folders:
        assert [p for p in everything if p.startswith(folder)] == [folder]
    assert all(s.reason in REASONS for s in result.skipped)


def test_size_cap_is_configurable(project: Path) -> None:
    result = walk_workspace(project, max_file_bytes=2_000_000)
    assert "big.py" in _files(result)
    small = walk_workspace(project, max_file_bytes=3)
    assert _skipped(small)["app.py"] == "too-large"


def test_start_folder_keeps_root_relative_paths_and_the_rules_above_it(project: Path) -> None:
    result = walk_workspace(project, project / "sub")
    assert _files(result) == ["sub/cache/y.py", "sub/keep_pb2.py", "sub/secret/fine.py"]
    assert _skipped(result) == {
        "sub/.gitignore": "unsupported-language",
        "sub/cache/x.py": "gitignored",
        "sub/drop_pb2.py": "gitignored",  # the root's *_pb2.py reaches into sub/
        "sub/generated/": "gitignored",
        "sub/local_settings.py": "gitignored",
    }
    relative = walk_workspace(project, Path("sub") / "cache")
    assert _files(relative) == ["sub/cache/y.py"]
    assert _skipped(relative) == {"sub/cache/x.py": "gitignored"}


def test_start_must_be_a_folder_inside_the_root(project: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not inside"):
        walk_workspace(project, tmp_path)
    with pytest.raises(ValueError, match="not inside"):
        walk_workspace(project, Path(".."))
    with pytest.raises(NotADirectoryError):
        walk_workspace(project, project / "app.py")
    sibling = tmp_path / "my project ü_secret"  # a string-prefix check would let this in
    _write(sibling / "x.py")
    with pytest.raises(ValueError, match="not inside"):
        walk_workspace(project, sibling)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinks_never_lead_out_of_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside / "leak.py")
    root = tmp_path / "ws"
    _write(root / "real" / "mod.py")
    _write(root / "main.py")
    (root / "to_outside_file.py").symlink_to(outside / "leak.py")
    (root / "to_outside_dir").symlink_to(outside, target_is_directory=True)
    (root / "alias.py").symlink_to(root / "main.py")
    (root / "real_alias").symlink_to(root / "real", target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "loop").symlink_to(root, target_is_directory=True)
    result = walk_workspace(root)
    assert _files(result) == ["alias.py", "main.py", "real/mod.py"]
    assert _skipped(result) == {
        "dangling.py": "unreadable",
        "loop/": "symlink-dir",
        "real_alias/": "symlink-dir",
        "to_outside_dir/": "symlink-outside",
        "to_outside_file.py": "symlink-outside",
    }
    alias = next(f for f in result.files if f.rel_path == "alias.py")
    assert alias.abs_path == root / "alias.py"
    assert alias.size == (root / "main.py").stat().st_size


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions, not root")
def test_unreadable_folder_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _write(root / "locked" / "a.py")
    _write(root / "ok.py")
    (root / "locked").chmod(0)
    try:
        result = walk_workspace(root)
    finally:
        (root / "locked").chmod(0o755)
    assert _files(result) == ["ok.py"]
    assert _skipped(result) == {"locked/": "unreadable"}


def test_folder_that_cannot_be_listed_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same as above for any user (root reads everything): the listing itself fails."""
    root = tmp_path / "ws"
    _write(root / "locked" / "a.py")
    _write(root / "ok.py")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr("llmem.code.walk.os.scandir", scandir)
    result = walk_workspace(root)
    assert _files(result) == ["ok.py"]
    assert _skipped(result) == {"locked/": "unreadable"}


def test_go_vendor_folder_is_a_dependency_folder_but_a_plain_vendor_is_not(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _write(root / "vendor" / "modules.txt", "# github.com/x/y v1.0.0\n")
    _write(root / "vendor" / "github.com" / "x" / "y" / "y.go", "package y\n")
    _write(root / "lib" / "vendor" / "thirdparty.py")
    result = walk_workspace(root)
    assert _files(result) == ["lib/vendor/thirdparty.py"]
    assert _skipped(result) == {"vendor/": "dependency-dir"}


def test_is_probably_binary(project: Path, tmp_path: Path) -> None:
    assert is_probably_binary(project / "nul.py")
    assert not is_probably_binary(project / "app.py")
    assert is_probably_binary(project / "docs" / "logo.png")  # by extension, whatever it holds
    late_nul = tmp_path / "late.py"
    late_nul.write_bytes(b"a" * 9000 + b"\x00")
    assert not is_probably_binary(late_nul)  # only the first 8 KiB are sniffed
    assert not is_probably_binary(tmp_path / "missing.py")


def test_empty_workspace(tmp_path: Path) -> None:
    assert walk_workspace(tmp_path) == WalkResult(files=[], skipped=[])


def test_skipped_is_a_value(tmp_path: Path) -> None:
    _write(tmp_path / "notes.txt")
    assert walk_workspace(tmp_path).skipped == [Skipped("notes.txt", "unsupported-language")]


@pytest.mark.slow
def test_ten_thousand_files_walk_in_well_under_a_second(tmp_path: Path) -> None:
    root = tmp_path / "big"
    _write(root / ".gitignore", "*.log\n*_pb2.py\n/secret/\ndocs/_build/\n!important.log\n*.bak\n" * 5)
    for a in range(20):
        folder = root / f"pkg{a}"
        folder.mkdir(parents=True)
        (folder / ".gitignore").write_text("generated_*.py\n!generated_keep.py\n")
        for b in range(10):
            sub = folder / f"mod{b}"
            sub.mkdir()
            for c in range(50):
                (sub / f"f{c}{('.py', '.ts', '.md', '_pb2.py')[c % 4]}").write_text("x = 1\n")
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        result = walk_workspace(root)
        timings.append(time.perf_counter() - started)
    assert len(result.files) == 200 * 38  # per folder: 13 .py, 13 .ts and 12 .md of the 50
    assert len(result.skipped) == 200 * 12 + 21  # 12 ignored _pb2.py; the .gitignore files
    assert {s.reason for s in result.skipped} == {"gitignored", "unsupported-language"}
    assert min(timings) < 1.0, timings


def test_llmemignore_keeps_paths_out_of_the_walk_like_gitignore(tmp_path: Path) -> None:
    """A folder deleted by hand must not come back at the next parse: the user lists it in
    ``.llmemignore`` (gitignore syntax, any folder, negations), which git knows nothing about."""
    _write(tmp_path / "src" / "keep.py")
    _write(tmp_path / "src" / "generated" / "big.py")
    _write(tmp_path / "legacy" / "old.py")
    _write(tmp_path / "legacy" / "still_wanted.py")
    _write(tmp_path / "src" / "gen_a.py")
    _write(tmp_path / "src" / "gen_keep.py")
    _write(tmp_path / "tracked_but_gitignored.py")
    _write(tmp_path / ".gitignore", "tracked_but_gitignored.py\n")
    _write(tmp_path / ".llmemignore", "# our exclude list\nlegacy/*\n!legacy/still_wanted.py\nsrc/generated/\n")
    _write(tmp_path / "src" / ".llmemignore", "gen_*.py\n!gen_keep.py\n")
    result = walk_workspace(tmp_path)
    assert _files(result) == ["legacy/still_wanted.py", "src/gen_keep.py", "src/keep.py"]
    skipped = _skipped(result)
    assert skipped["legacy/old.py"] == "llmemignored"
    assert skipped["src/generated/"] == "llmemignored"
    assert skipped["src/gen_a.py"] == "llmemignored"
    assert skipped["tracked_but_gitignored.py"] == "gitignored"
    # Walking only a subfolder still applies the exclude lists above it.
    assert _files(walk_workspace(tmp_path, tmp_path / "src")) == ["src/gen_keep.py", "src/keep.py"]
