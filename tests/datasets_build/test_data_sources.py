"""datasets_build.sources: per-file pinned downloads from a loopback raw-file mirror, verification, cache, faults.

GitHub is not reachable from CI: every test serves files from a ThreadingHTTPServer on 127.0.0.1
(tests/support/mirror.py) in the raw-file layout ``<owner>/<repo>/<commit>/<path>``.
"""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from datasets_build import manifest_tool, nback, sources, splat
from datasets_build.manifest import load_manifest, manifest_names, parse_manifest
from plumbing.errors import UserError
from tests.support.mirror import manifest_files, serve

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FILES = {"README.md": b"hello\n", "Grouping Datasets/#a# b.csv": b"x,y\n1,2\n" * 50, "data/n\xc3\xa4.txt": "ünï\n".encode()}


def toy_manifest(files: dict[str, bytes] = FILES, absent: tuple[str, ...] = ()):
    entries = ",\n".join(
        f'  {{ path = {json.dumps(p, ensure_ascii=False)}, size = {len(b)}, sha256 = "{hashlib.sha256(b).hexdigest()}" }}'
        for p, b in files.items()
    )
    text = f'name = "toy"\nabsent = {json.dumps(list(absent))}\n\n[[groups]]\nrepo = "owner/repo"\ncommit = "{COMMIT}"\nlocal = ""\nremote = "sub/"\nfiles = [\n{entries}\n]\n'
    return parse_manifest(text)


def served(manifest, files: dict[str, bytes] = FILES) -> dict[str, bytes]:
    return {"/" + p.url("").lstrip("/"): files[p.path] for p in manifest.files}


def url_of(manifest, path: str) -> str:
    return "/" + manifest.by_path()[path].url("").lstrip("/")


@pytest.fixture(autouse=True)
def settings(tmp_path, monkeypatch):
    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    sources.reset()
    sources.configure(cache_dir=tmp_path / "cache", timeout=2.0, retries=3)
    yield
    sources.reset()


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def leftovers(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())


def test_files_are_downloaded_verified_and_reused_from_the_cache(tmp_path):
    manifest = toy_manifest()
    with serve(served(manifest)) as mirror:
        sources.configure(base_url=mirror.url)
        folder = sources.fetch_source(manifest)
        assert {p: (folder / p).read_bytes() for p in FILES} == FILES
        first = sum(mirror.hits.values())
        assert first == len(FILES)
        assert sources.fetch_source(manifest) == folder  # warm: re-hashed, nothing fetched
        assert sum(mirror.hits.values()) == first
    assert not [n for n in leftovers(tmp_path) if n.endswith(".part")]


def test_absent_files_are_listed_for_the_builders(tmp_path):
    manifest = toy_manifest(absent=("big/#x#.csv",))
    with serve(served(manifest)) as mirror:
        sources.configure(base_url=mirror.url)
        folder = sources.fetch_source(manifest)
    assert (folder / "MISSING.txt").read_text() == "absent from snapshot: big/#x#.csv\n"


def test_tampered_download_is_one_line_naming_file_and_both_hashes_and_leaves_nothing(tmp_path):
    manifest = toy_manifest()
    bad = dict(FILES, **{"README.md": b"hellO\n"})
    with serve(served(manifest, bad)) as mirror:
        sources.configure(base_url=mirror.url)
        with pytest.raises(UserError) as exc:
            sources.fetch_source(manifest)
    line = one_line(exc)
    assert "toy/README.md" in line and manifest.by_path()["README.md"].sha256 in line and hashlib.sha256(b"hellO\n").hexdigest() in line
    assert "README.md" not in leftovers(tmp_path) and "README.md.part" not in leftovers(tmp_path)


def test_tampered_cache_file_stops_the_build_and_is_downloaded_again(tmp_path):
    manifest = toy_manifest()
    with serve(served(manifest)) as mirror:
        sources.configure(base_url=mirror.url)
        folder = sources.fetch_source(manifest)
        (folder / "README.md").write_bytes(b"hello")  # truncated
        with pytest.raises(UserError) as exc:
            sources.fetch_source(manifest)
        assert "toy/README.md" in one_line(exc) and "size 5" in one_line(exc)
        assert not (folder / "README.md").exists()
        sources.fetch_source(manifest)
        assert (folder / "README.md").read_bytes() == FILES["README.md"]
        assert mirror.hits[url_of(manifest, "README.md")] == 2


@pytest.mark.parametrize(
    "fault, words, tries", [(404, ["HTTP 404", "owner/repo@" + COMMIT, "sub/README.md"], 1), (500, ["HTTP 500", "3 tries"], 3)]
)
def test_http_errors_are_one_line_naming_the_url_after_bounded_retries(tmp_path, fault, words, tries):
    manifest = toy_manifest()
    target = url_of(manifest, "README.md")
    with serve(served(manifest), faults={target: fault}) as mirror:
        sources.configure(base_url=mirror.url)
        with pytest.raises(UserError) as exc:
            sources.fetch_source(manifest)
        assert mirror.hits[target] == tries
    line = one_line(exc)
    assert mirror.url + target in line
    assert all(w in line for w in words), line
    assert "README.md" not in leftovers(tmp_path)


def test_a_hanging_mirror_times_out_with_one_line_naming_the_url(tmp_path):
    manifest = toy_manifest()
    target = url_of(manifest, "README.md")
    sources.configure(timeout=0.5, retries=2)
    with serve(served(manifest), faults={target: "hang"}) as mirror:
        sources.configure(base_url=mirror.url)
        with pytest.raises(UserError) as exc:
            sources.fetch_source(manifest)
        assert mirror.hits[target] == 2
    line = one_line(exc)
    assert mirror.url + target in line and "2 tries" in line and "timed out" in line
    assert "README.md" not in leftovers(tmp_path)


def test_an_interrupted_download_resumes_from_its_part_file(tmp_path):
    manifest = toy_manifest()
    path = "Grouping Datasets/#a# b.csv"
    folder = tmp_path / "cache" / f"toy-{manifest.digest[:12]}"
    (folder / "Grouping Datasets").mkdir(parents=True)
    (folder / (path + ".part")).write_bytes(FILES[path][:100])
    with serve(served(manifest)) as mirror:
        sources.configure(base_url=mirror.url)
        sources.fetch_source(manifest)
    assert mirror.ranges == ["bytes=100-"]
    assert (folder / path).read_bytes() == FILES[path]


def test_a_part_file_restarts_cleanly_when_the_server_ignores_ranges(tmp_path):
    manifest = toy_manifest()
    path = "Grouping Datasets/#a# b.csv"
    folder = tmp_path / "cache" / f"toy-{manifest.digest[:12]}"
    (folder / "Grouping Datasets").mkdir(parents=True)
    (folder / (path + ".part")).write_bytes(b"stale bytes of a killed download")
    with serve(served(manifest)) as mirror:
        mirror.honour_range = False
        sources.configure(base_url=mirror.url)
        sources.fetch_source(manifest)
    assert mirror.ranges == ["bytes=32-"]
    assert (folder / path).read_bytes() == FILES[path]


def test_user_commit_needs_allow_unverified_and_fetches_that_commit(tmp_path):
    manifest = toy_manifest()
    other = "f" * 40
    files = {url.replace(COMMIT, other): body for url, body in served(manifest).items()}
    with serve(files) as mirror:
        sources.configure(base_url=mirror.url, commits={"toy": other})
        with pytest.raises(UserError, match="--allow-unverified"):
            sources.fetch_source(manifest)
        sources.configure(allow_unverified=True)
        folder = sources.fetch_source(manifest)
    assert folder.name == f"toy-user-{other[:12]}" and (folder / "README.md").read_bytes() == FILES["README.md"]


def test_allow_unverified_without_a_user_commit_is_refused(capsys):
    from triangulation.cli.main import main

    assert main(["data", "build", "--datasets", "splat", "--allow-unverified"]) != 0
    assert "--source-commit" in capsys.readouterr().err


@pytest.mark.parametrize("spec, words", [("nope=abc1234", "no upstream source 'nope'"), ("splat=main", "NAME=COMMIT")])
def test_bad_source_commit_is_one_line(capsys, spec, words):
    from triangulation.cli.main import main

    assert main(["data", "build", "--source-commit", spec, "--allow-unverified"]) == 2
    assert words in capsys.readouterr().err


def test_source_dir_fetches_a_cognitive_test_source_from_the_mirror(upstream, tmp_path, monkeypatch):
    with serve(manifest_files(upstream, ["lm_pragmatics"])) as mirror:
        monkeypatch.setenv("TRIANGULATE_SOURCE_URL", mirror.url)
        folder = sources.source_dir("lm_pragmatics")
    pinned = load_manifest("lm_pragmatics").files
    assert len(pinned) == 98
    assert all((folder / p.path).read_bytes() == (upstream / "lm_pragmatics" / p.path).read_bytes() for p in pinned)


def test_unknown_source_is_one_line():
    with pytest.raises(UserError, match="no manifest for upstream source 'nope'"):
        sources.source_dir("nope")


def test_manifests_match_the_upstream_copies(upstream):
    assert manifest_tool.main(["--upstream", str(upstream), "--check"]) == 0
    assert {"globalgroup", "connections", "splat", "nback", "clembench", "clembench-runs", "lm_pragmatics"} <= set(manifest_names())


def test_manifest_pins_are_the_commits_the_copies_name(upstream):
    """Every (repository, commit) of a manifest is the one the copy's SOURCE file names."""
    for name in manifest_names():
        notes = (upstream / name / "SOURCE").read_text(encoding="utf-8").lower()
        for repo, commit in load_manifest(name).repos:
            assert f"github.com/{repo.lower()}" in notes and commit in notes, (name, repo, commit)


def test_manifest_check_notices_a_changed_file(upstream, tmp_path):
    import shutil

    shutil.copytree(upstream / "splat", tmp_path / "splat")
    (tmp_path / "splat" / "README.md").write_text("changed\n")
    assert manifest_tool.main(["--upstream", str(tmp_path), "--check", "splat"]) == 1


def test_derived_nback_texts_equal_the_shared_copies(upstream):
    root = upstream / "nback"
    for kind in nback.KINDS:
        for n in nback.LEVELS:
            expected = (root / "prompts" / nback.KINDS[kind]["prompt"].format(n=n)).read_text(encoding="utf-8")
            assert nback.load_system_prompt(kind, n, root) == expected
    assert nback.load_grids(root) == json.loads((root / "grids_3x3.json").read_text(encoding="utf-8"))["grids"]


def test_derived_splat_prompts_equal_the_shared_copies(upstream):
    assert splat.upstream_prompts(upstream / "splat") == splat.read_prompts(upstream / "splat" / "prompts")


def test_fasttext_command_downloads_resumes_and_unpacks(tmp_path, capsys):
    from triangulation.cli.main import main

    payload = bytes(range(256)) * 40 + b"fake fastText model"
    archive = gzip.compress(payload)
    out = tmp_path / "ft"
    out.mkdir()
    (out / "cc.xx.300.bin.gz.part").write_bytes(archive[:300])  # a killed download
    with serve({"/cc.xx.300.bin.gz": archive}) as mirror:
        assert main(["data", "fasttext", "xx", "--out", str(out), "--base-url", mirror.url]) == 0
    assert mirror.ranges == ["bytes=300-"]
    assert (out / "cc.xx.300.bin").read_bytes() == payload
    assert sorted(p.name for p in out.iterdir()) == ["cc.xx.300.bin"]
    assert "TRIANGULATE_FASTTEXT_DIR" in capsys.readouterr().out


def test_fasttext_404_is_one_line(tmp_path, capsys):
    from triangulation.cli.main import main

    with serve({}) as mirror:
        assert main(["data", "fasttext", "xx", "--out", str(tmp_path), "--base-url", mirror.url]) != 0
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{mirror.url}/cc.xx.300.bin.gz" in err


@pytest.mark.parametrize("fault", ["tampered", 404, 500, "hang"])
def test_cli_build_from_a_faulty_mirror_is_one_line_and_leaves_no_dataset(upstream, tmp_path, monkeypatch, capsys, fault):
    """`triangulate data build --datasets splat` through a mirror whose puzzles.xlsx is bad: exit 2, one
    error line naming the file or the URL, no built folder and no half-downloaded file left."""
    from triangulation.cli.main import main

    files = manifest_files(upstream, ["splat"])
    target = next(url for url in files if url.endswith("/puzzles.xlsx"))
    faults = {}
    if fault == "tampered":
        files[target] = files[target].read_bytes()[:-10]  # truncated
    else:
        faults[target] = fault
    out = tmp_path / "data"
    with serve(files, faults=faults) as mirror:
        monkeypatch.setenv("TRIANGULATE_SOURCE_URL", mirror.url)
        code = main(["data", "build", "--datasets", "splat", "--out", str(out), "--download-timeout", "0.5", "--download-retries", "2"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("triangulate: error:")]
    assert code == 2 and len(err) == 1
    assert ("splat/puzzles.xlsx" if fault == "tampered" else mirror.url + target) in err[0]
    assert not out.exists() or list(out.iterdir()) == []
    assert not [p for p in (tmp_path / "cache").rglob("puzzles.xlsx*")]
