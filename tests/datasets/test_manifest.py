"""The data manifest, data_home(), and loaders that follow the data folder they are pointed at."""

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

import medmtl
from medmtl import datasets
from medmtl.datasets import DataFileError, data_home, manifest, sources
from medmtl.datasets.__main__ import main as manifest_command

from data_damage import FILES, READERS

HEART = "uci_statlog_heart/heart.dat"


def _folder(tmp_path, files, name="copy"):
    """A data folder holding ``files`` ({path: bytes or a bundled file to copy}) and no manifest."""
    home = tmp_path / name
    for rel, content in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (home / rel).write_bytes(content)
        else:
            shutil.copyfile(data_home() / content, home / rel)
    return home


def _write_manifest(home, monkeypatch):
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    assert manifest_command(["--write"]) == 0


def test_committed_manifest_matches_the_files_and_names_every_data_set():
    assert sources.check_folder(shapes=False) == []
    path, committed = manifest.read_manifest()
    assert path == data_home() / "MANIFEST.json"
    # Every data set in the manifest has a reader in the damage tests, with the same files.
    assert {key: entry["files"] for key, entry in committed["loaders"].items()} == FILES
    assert set(READERS) == set(FILES)


def test_data_home_takes_medmtl_data_first_then_the_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("MEDMTL_DATA", raising=False)
    assert data_home() == Path(medmtl.__file__).resolve().parents[1] / "data"  # the tests run in a checkout
    monkeypatch.setenv("MEDMTL_DATA", str(tmp_path))
    assert data_home() == tmp_path
    monkeypatch.setenv("MEDMTL_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="MEDMTL_DATA names .*nowhere"):
        datasets.load_heart()


def test_each_file_is_hashed_once_per_version(tmp_path, monkeypatch):
    home = _folder(tmp_path, {HEART: HEART})
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    calls = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda *a: calls.append(1) or real(*a))
    first = datasets.load_heart()
    datasets.load_heart()
    assert len(calls) == 1
    path = home / HEART
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same bytes, new version
    again = datasets.load_heart()
    assert len(calls) == 2
    assert all(np.array_equal(a.X, b.X) for a, b in zip(first, again))


def test_a_damaged_file_is_named_with_what_the_manifest_expects(tmp_path, monkeypatch):
    raw = (data_home() / HEART).read_bytes()
    home = _folder(tmp_path, {HEART: raw.replace(b"70.0", b"71.0", 1)})
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    with pytest.raises(DataFileError, match=r"heart\.dat has SHA-256 .* expects [0-9a-f]{64}.*--write"):
        datasets.load_heart()
    (home / HEART).write_bytes(raw[:-10])
    with pytest.raises(DataFileError, match=r"heart\.dat has 16613 bytes but .*MANIFEST\.json expects 16623"):
        datasets.load_heart()


def test_an_empty_file_gives_a_clear_error_even_with_its_own_manifest(tmp_path, monkeypatch):
    home = _folder(tmp_path, {HEART: b""})
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    with pytest.raises(DataFileError, match=r"heart\.dat is empty"):
        datasets.load_heart()
    own = {"files": {HEART: {"sha256": hashlib.sha256(b"").hexdigest(), "size": 0}}, "loaders": {}}
    (home / "MANIFEST.json").write_text(json.dumps(own))
    with pytest.raises(DataFileError, match=r"heart\.dat is empty"):
        datasets.load_heart()


def test_a_wrong_shape_names_the_file_and_the_expected_shape(tmp_path, monkeypatch):
    home = _folder(tmp_path, {HEART: HEART})
    _write_manifest(home, monkeypatch)
    own = json.loads((home / "MANIFEST.json").read_text())
    assert list(own["loaders"]) == ["heart"]  # a folder's manifest describes the data sets it holds
    own["loaders"]["heart"].update(rows=271, classes=3)
    (home / "MANIFEST.json").write_text(json.dumps(own))
    with pytest.raises(DataFileError, match=r"heart\.dat parsed to rows=270, classes=2; .*MANIFEST\.json "
                                            r"expects rows=271, classes=3 for load_heart\(\)"):
        datasets.load_heart()


def test_a_file_missing_from_the_manifest_or_the_folder_is_an_error(tmp_path, monkeypatch):
    home = _folder(tmp_path, {HEART: HEART})
    (home / "MANIFEST.json").write_text(json.dumps({"files": {}, "loaders": {}}))
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    with pytest.raises(DataFileError, match=r"heart\.dat is not listed in .*MANIFEST\.json"):
        datasets.load_heart()
    with pytest.raises(FileNotFoundError, match=r"missing data file .*housing\.data"):
        datasets.load_housing()
    (home / "MANIFEST.json").write_text("{not json")
    with pytest.raises(DataFileError, match=r"data manifest .*MANIFEST\.json cannot be read"):
        datasets.load_heart()


def test_the_manifest_command_lists_each_difference(tmp_path, monkeypatch, capsys):
    home = _folder(tmp_path, {HEART: HEART, "boston_housing/housing.data": "boston_housing/housing.data"})
    _write_manifest(home, monkeypatch)
    assert manifest_command([]) == 0
    (home / HEART).write_bytes(b"changed")
    (home / "extra.txt").write_bytes(b"new")
    capsys.readouterr()
    assert manifest_command(["--files-only"]) == 1
    out = capsys.readouterr().out
    assert f"files: {HEART} is {{" in out and "files: extra.txt is in" in out and "differs from" in out


def _newsgroups_tar(posts):
    """A 20 Newsgroups-shaped .tar.gz: {(part, group): [text, ...]}."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for (part, group), texts in posts.items():
            for i, text in enumerate(texts):
                info = tarfile.TarInfo(f"20news-bydate-{part}/{group}/{i}")
                info.size = len(text.encode("latin-1"))
                tar.addfile(info, io.BytesIO(text.encode("latin-1")))
    return buffer.getvalue()


def test_memoised_data_follow_medmtl_data_and_the_files_modification(tmp_path, monkeypatch):
    bundled_derm = datasets.load_dermatology()
    derm = np.genfromtxt(data_home() / "uci_dermatology/dermatology.data", delimiter=",", dtype=str)
    derm[:, 34] = np.roll(derm[:, 34], 1)  # a permuted-label copy
    splice_lines = (data_home() / "uci_splice/splice.csv").read_text().splitlines()[:41]
    space_vs_autos = ("sci.space", "rec.autos")
    news_a = {("train", "sci.space"): ["orbit"] * 3, ("test", "sci.space"): ["moon"],
              ("test", "rec.autos"): ["engine", "wheel"]}
    news_b = {("test", "sci.space"): ["comet"], ("test", "rec.autos"): ["brake"]}
    home = _folder(tmp_path, {"uci_dermatology/dermatology.data": "\n".join(",".join(r) for r in derm).encode(),
                              "uci_splice/splice.csv": ("\n".join(splice_lines) + "\n").encode(),
                              "20newsgroups/20news-bydate.tar.gz": _newsgroups_tar(news_a)})
    other = _folder(tmp_path, {"20newsgroups/20news-bydate.tar.gz": _newsgroups_tar(news_b)}, "other")
    _write_manifest(other, monkeypatch)
    assert datasets.load_20newsgroups("test")[0] == ["comet", "brake"]
    assert datasets.newsgroups_corpus(min_df=1, groups=space_vs_autos)[0].shape[0] == 2
    _write_manifest(home, monkeypatch)

    assert not all(np.array_equal(a.y, b.y) for a, b in zip(datasets.load_dermatology(), bundled_derm))
    assert datasets.load_splice()[0].n_samples == 40
    docs, names, labels = datasets.load_20newsgroups("test")
    assert docs == ["moon", "engine", "wheel"] and names == ["rec.autos", "sci.space"]
    X, groups, _ = datasets.newsgroups_corpus(min_df=1, groups=space_vs_autos)
    assert X.shape[0] == 6 and sorted(groups.tolist()) == ["rec.autos"] * 2 + ["sci.space"] * 4

    # Pointing MEDMTL_DATA at nothing never returns the data read before.
    monkeypatch.setenv("MEDMTL_DATA", str(tmp_path / "nowhere"))
    for load in (datasets.load_dermatology, datasets.load_splice, datasets.load_20newsgroups):
        with pytest.raises(FileNotFoundError, match="nowhere"):
            load()
    with pytest.raises(FileNotFoundError, match="nowhere"):
        datasets.newsgroups_corpus(min_df=1, groups=space_vs_autos)

    # Changing a file in place (and its manifest) is seen at the next load.
    (home / "uci_splice/splice.csv").write_text("\n".join(splice_lines[:11]) + "\n")
    _write_manifest(home, monkeypatch)
    assert datasets.load_splice()[0].n_samples == 10

    monkeypatch.setenv("MEDMTL_DATA", str(other))
    assert datasets.load_20newsgroups("test")[0] == ["comet", "brake"]
    assert datasets.newsgroups_corpus(min_df=1, groups=space_vs_autos)[0].shape[0] == 2
    monkeypatch.delenv("MEDMTL_DATA")
    assert all(np.array_equal(a.y, b.y) for a, b in zip(datasets.load_dermatology(), bundled_derm))
    assert datasets.load_splice()[0].n_samples == 3190


def test_gzip_content_damage_is_found_by_the_parsers(tmp_path, monkeypatch):
    """Damage inside a valid gzip stream passes gzip's own check; the parsers name the file."""
    rel = "blitzer_sentiment/processed_acl/kitchen/positive.review.gz"
    text = gzip.decompress((data_home() / rel).read_bytes()).decode()
    lines = text.splitlines()
    lines[5] = lines[5].replace("#label#:positive", "#label#:negative")
    home = _folder(tmp_path, {rel: gzip.compress("\n".join(lines).encode()),
                              rel.replace("positive", "negative"): rel.replace("positive", "negative")})
    _write_manifest_files_only(home)
    monkeypatch.setenv("MEDMTL_DATA", str(home))
    with pytest.raises(DataFileError, match=r"positive\.review\.gz: line 6 does not end with #label#:positive"):
        datasets.load_sentiment(["kitchen"])


def _write_manifest_files_only(home):
    """The folder's own manifest: its files' new hashes, the bundled shapes."""
    own = sources.build_manifest(home, shapes=False)
    own["loaders"] = manifest.read_manifest(data_home())[1]["loaders"]
    (home / "MANIFEST.json").write_text(json.dumps(own))
