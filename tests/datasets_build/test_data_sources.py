"""datasets_build.sources: pinned archive download, SHA-256 check, safe extraction, cache, overrides.

GitHub is not reachable from CI, so every test serves a tarball it builds itself over file://.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile

import pytest

from datasets_build import sources
from datasets_build.sources import PinnedSource, fetch, source_dir
from plumbing.errors import UserError

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_archive(path, top="repo-" + COMMIT, files=None, extra_member=None):
    """A GitHub-style tar.gz: one top-level folder holding ``files``."""
    files = files or {"README.md": "hello\n", "data/a.csv": "x,y\n1,2\n", "Grouping Datasets/n.txt": "ünï\n"}
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            blob = text.encode("utf-8")
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
        if extra_member:
            info = tarfile.TarInfo(extra_member)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def reset_settings():
    saved = (sources.SETTINGS.allow_unverified, sources.SETTINGS.base_url, sources.SETTINGS.cache_dir)
    yield
    sources.SETTINGS.allow_unverified, sources.SETTINGS.base_url, sources.SETTINGS.cache_dir = saved


def test_verified_download_is_extracted_and_cached(tmp_path):
    archive = tmp_path / "srv" / "a.tar.gz"
    digest = make_archive(archive)
    pin = PinnedSource("owner", "repo", COMMIT, digest)
    dest = tmp_path / "cache" / "repo"
    assert fetch(pin, dest, url=archive.as_uri()) == dest
    assert (dest / "README.md").read_text() == "hello\n"
    assert (dest / "data" / "a.csv").read_text() == "x,y\n1,2\n"
    assert (dest / "Grouping Datasets" / "n.txt").read_text(encoding="utf-8") == "ünï\n"
    archive.unlink()  # a second call must not download again
    assert fetch(pin, dest, url=archive.as_uri()) == dest
    assert sorted(p.name for p in dest.parent.iterdir()) == ["repo"]  # no partial archive left


def test_checksum_mismatch_is_one_clear_error_and_leaves_no_folder(tmp_path):
    archive = tmp_path / "a.tar.gz"
    make_archive(archive)
    pin = PinnedSource("owner", "repo", COMMIT, "0" * 64)
    dest = tmp_path / "cache" / "repo"
    with pytest.raises(UserError, match="checksum mismatch .* expected sha256 0{64}, got [0-9a-f]{64}"):
        fetch(pin, dest, url=archive.as_uri())
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_unrecorded_checksum_is_refused_unless_allowed(tmp_path, capsys):
    archive = tmp_path / "a.tar.gz"
    digest = make_archive(archive)
    pin = PinnedSource("owner", "repo", COMMIT, None)
    dest = tmp_path / "cache" / "repo"
    with pytest.raises(UserError, match=f"refusing unverified archive.*{digest}.*--allow-unverified"):
        fetch(pin, dest, url=archive.as_uri())
    assert not dest.exists()
    sources.configure(allow_unverified=True)
    fetch(pin, dest, url=archive.as_uri())
    assert (dest / "README.md").is_file()
    assert digest in capsys.readouterr().err


def test_unsafe_archive_member_is_refused(tmp_path):
    archive = tmp_path / "a.tar.gz"
    digest = make_archive(archive, extra_member=f"repo-{COMMIT}/../../escape.txt")
    with pytest.raises(UserError, match="unsafe archive member"):
        fetch(PinnedSource("o", "r", COMMIT, digest), tmp_path / "cache" / "r", url=archive.as_uri())
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "cache" / "r").exists()


def test_not_an_archive_is_a_user_error(tmp_path):
    bogus = tmp_path / "a.tar.gz"
    bogus.write_bytes(b"<html>rate limited</html>")
    digest = hashlib.sha256(bogus.read_bytes()).hexdigest()
    with pytest.raises(UserError, match="not a readable tar.gz"):
        fetch(PinnedSource("o", "r", COMMIT, digest), tmp_path / "cache" / "r", url=bogus.as_uri())


def test_unreachable_url_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot download .*TRIANGULATE_SOURCE_URL"):
        fetch(PinnedSource("o", "r", COMMIT, None), tmp_path / "c" / "r", url=(tmp_path / "missing.tar.gz").as_uri())


def test_source_dir_downloads_from_overridden_base_url_without_upstream(tmp_path, monkeypatch):
    """No TRIANGULATE_UPSTREAM: the pinned URL <base>/<owner>/<repo>/tar.gz/<commit> is fetched and cached."""
    served = tmp_path / "mirror" / "owner" / "repo" / "tar.gz" / COMMIT
    digest = make_archive(served)
    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    monkeypatch.setenv("TRIANGULATE_SOURCE_URL", (tmp_path / "mirror").as_uri())
    monkeypatch.setenv("TRIANGULATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(sources.PINNED, "toy", PinnedSource("owner", "repo", COMMIT, digest))
    folder = source_dir("toy")
    assert folder == tmp_path / "cache" / "sources" / f"toy-{COMMIT[:12]}"
    assert (folder / "data" / "a.csv").is_file()
    with pytest.raises(UserError, match="no pinned download"):
        source_dir("not-pinned")


def test_real_pins_match_the_upstream_source_files(upstream):
    """The pinned commits are the ones the SOURCE files of the upstream snapshot name."""
    for name in ("globalgroup", "connections"):
        text = (upstream / name / "SOURCE").read_text(encoding="utf-8")
        commit = re.search(r"commit:\s*([0-9a-f]{40})", text).group(1)
        repo = re.search(r"github\.com/([^/\s]+)/([^/\s]+)", text)
        pin = sources.PINNED[name]
        assert (pin.owner, pin.repo, pin.commit) == (repo.group(1), repo.group(2), commit)
        assert pin.url(sources.DEFAULT_BASE_URL) == f"https://codeload.github.com/{pin.owner}/{pin.repo}/tar.gz/{commit}"


def test_cli_build_from_a_mirror_without_upstream(upstream, tmp_path, monkeypatch, capsys):
    """`triangulate data build` with no TRIANGULATE_UPSTREAM: pinned archive from --source-url, refused
    until --allow-unverified (no real checksum is recorded), then built from the unpacked archive."""
    from triangulation.cli import main

    pin = sources.PINNED["connections"]
    served = tmp_path / "mirror" / pin.owner / pin.repo / "tar.gz" / pin.commit
    served.parent.mkdir(parents=True)
    with tarfile.open(served, "w:gz") as tar:
        tar.add(upstream / "connections", arcname=f"{pin.repo}-{pin.commit}")
    monkeypatch.delenv("TRIANGULATE_UPSTREAM")
    monkeypatch.setenv("TRIANGULATE_CACHE", str(tmp_path / "cache"))
    mirror = (tmp_path / "mirror").as_uri()
    out = tmp_path / "out"
    args = ["data", "build", "--datasets", "connections", "--out", str(out), "--source-url", mirror]
    assert main(args) == 2
    assert "refusing unverified archive" in capsys.readouterr().err
    assert not out.exists() or list(out.iterdir()) == []
    assert main([*args, "--allow-unverified"]) == 0
    assert "rows=    441" in capsys.readouterr().out
    assert (tmp_path / "cache" / "sources" / f"connections-{pin.commit[:12]}" / "scoring" / "scripts" / "gold_data.json").is_file()
