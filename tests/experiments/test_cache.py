"""The experiment cache: exact plain-format entries, never unpickled, keyed on code and data,
damaged entries reported and recomputed."""

import json
import math
import os
import pickle
import re
import shutil
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from medmtl.experiments import cache as cache_module
from medmtl.experiments.cache import (CacheWarning, CellCache, clear_cache, code_fingerprint, default_cache_dir,
                                      data_fingerprint, decode_value, encode_value)
from medmtl.experiments.runner import RunOptions, run_grid

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------ codec
def same(a, b):
    """Equal values of the same types, floats and arrays compared bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape and a.flags.f_contiguous == b.flags.f_contiguous
                and a.tobytes() == b.tobytes())
    if isinstance(a, (float, np.floating)):
        return (math.isnan(a) and math.isnan(b)) or struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(k, l) for k, l in zip(a, b)) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


ODD_FLOATS = [0.0, -0.0, 1e-320, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3,
              math.pi, float("nan"), float("inf"), float("-inf"), 2.0 ** 53 + 1, 123456789.123456789]

ROUND_TRIPS = {
    "the experiments' kinds": {"auc": 0.93, "chosen": {"C": 1.0, "alpha": None}, "ok": True,
                               "scores": [[0.1, -0.2], [3.0]], "tasks": ["a", "b"], "n": 366},
    "odd floats": ODD_FLOATS,
    "ints": [0, -1, 2 ** 63, -(2 ** 70), True, False],
    "numpy scalars": [np.float64(0.1), np.float32(1 / 3), np.float16(0.5), np.int64(-3), np.uint8(255),
                      np.int32(7), np.bool_(True), np.float64("nan"), np.float32("-inf")],
    "arrays": {"f": np.array([0.1, np.nan, -np.inf, 5e-324]), "i": np.arange(6, dtype=np.int16).reshape(2, 3),
               "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "empty": np.zeros((0, 4)),
               "bool": np.array([True, False]), "0-d": np.array(2.5), "text": np.array(["ab", "c"]),
               "f32": np.array([1 / 3], np.float32)},
    "nested tuples and keys": {1: (1, [2, (3.0,)]), (1, "a"): None, 2.5: "x", None: {}, "$dollar": 1},
    "strings": ["", "é ü 漢字", "\x00", "\ud800", '{"$float": "nan"}'],
    "empty": [[], {}, ()],
    "None": None,
}


@pytest.mark.parametrize("value", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_codec_round_trips_exactly(value, tmp_path):
    tree, arrays = encode_value(value)
    json.dumps(tree, allow_nan=False)  # plain, standard JSON
    assert same(decode_value(tree, arrays), value)
    cache = CellCache(tmp_path, "codec", code="c", data="d")
    cache.store({"i": 1}, value)
    found, back = cache.load({"i": 1})
    assert found and same(back, value)


@pytest.mark.parametrize("value, where", [
    ({"seen": {1, 2}}, "value['seen'] is a set"),
    ([1, 2j], "value[1] is a complex"),
    ({"a": [np.array([object()], dtype=object)]}, "value['a'][0] is an array of dtype object"),
    (np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "value is a MaskedArray"),
    ({"model": object()}, "value['model'] is an object"),
    (np.longdouble(1) / 3, "value is a longdouble"),
    (b"bytes", "value is a bytes"),
])
def test_values_the_codec_cannot_store_are_named(value, where):
    with pytest.raises(TypeError, match=f"^{re.escape(where)}"):
        encode_value(value)


def unstorable(cell):
    return {"fine": 1.0, "model": {cell["a"]}}


def test_an_unstorable_cell_value_is_an_error_when_written_with_or_without_the_cache(tmp_path):
    for use_cache in (True, False):
        options = RunOptions(cache_dir=tmp_path, use_cache=use_cache, progress=False)
        with pytest.raises(TypeError, match=r"'odd'.*value\['model'\] is a set.*cell: \{'a': 1\}"):
            run_grid(unstorable, [{"a": 1}], name="odd", options=options)
    assert not list(tmp_path.rglob("*.json"))


# ------------------------------------------------------------------------- forged entries
def make_marker(path):
    Path(path).write_text("executed")


class Exploit:
    """Unpickling this object calls make_marker: what a forged pickle does."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return make_marker, (self.marker,)


def constant(cell):
    return {"value": cell["a"] * 10, "array": np.arange(3.0)}


def test_forged_files_in_the_cache_folder_are_never_executed(tmp_path):
    marker = tmp_path / "marker"
    forged = pickle.dumps(Exploit(str(marker)))
    pickle.loads(forged)  # the forgery works when unpickled
    assert marker.exists()
    marker.unlink()

    folder = tmp_path / "cache"
    cells = [{"a": a} for a in range(3)]
    cache = CellCache(folder, "forged")
    paths = [cache.path(c) for c in cells]
    paths[0].parent.mkdir(parents=True)
    # 0: a pickle in place of the JSON entry and of its arrays, and under the old .pkl name
    paths[0].write_bytes(forged)
    paths[0].with_suffix(".npz").write_bytes(forged)
    paths[0].with_suffix(".pkl").write_bytes(forged)
    # 1: a sound JSON entry (right checksums) whose arrays file is the pickle
    cache.store(cells[1], constant(cells[1]))
    entry = json.loads(paths[1].read_text())
    paths[1].with_suffix(".npz").write_bytes(forged)
    entry.pop("sha256")
    entry["arrays"] = cache_module._sha256(forged)
    entry["sha256"] = cache_module._sha256(cache_module._canonical(entry).encode())
    paths[1].write_text(cache_module._canonical(entry))
    # 2: a real .npz whose array is an object array holding the forgery (pickled inside)
    cache.store(cells[2], constant(cells[2]))
    entry = json.loads(paths[2].read_text())
    np.savez(paths[2].with_suffix(".npz"), a0=np.array([Exploit(str(marker))], dtype=object))
    entry.pop("sha256")
    entry["arrays"] = cache_module._sha256(paths[2].with_suffix(".npz").read_bytes())
    entry["sha256"] = cache_module._sha256(cache_module._canonical(entry).encode())
    paths[2].write_text(cache_module._canonical(entry))

    options = RunOptions(cache_dir=folder, progress=False)
    with pytest.warns(CacheWarning) as caught:
        out = run_grid(constant, cells, name="forged", options=options)
    assert not marker.exists()
    assert [o["value"] for o in out] == [0, 10, 20]
    assert sorted(str(w.message).split()[4].rstrip(":") for w in caught) == sorted(map(str, paths))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same(run_grid(constant, cells, name="forged", options=options), out)


# ------------------------------------------------------------------------- damaged entries
def counted(cell):
    with open(cell["log"], "a") as fh:
        fh.write(f"{cell['a']}\n")
    return {"a": cell["a"], "third": cell["a"] / 3, "array": np.full(2, cell["a"] / 7)}


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def empty(path):
    path.write_bytes(b"")


def random_bytes(path):
    path.write_bytes(np.random.default_rng(0).bytes(path.stat().st_size))


def altered_number(path):
    # well-formed JSON, one digit of the value changed: only the checksum tells
    text = path.read_text()
    i = text.index('"third":') + len('"third":') + 3
    path.write_text(text[:i] + ("1" if text[i] != "1" else "2") + text[i + 1:])


def reformatted(path):
    # valid JSON with the same data but the checksum field changed to another entry's
    entry = json.loads(path.read_text())
    entry["sha256"] = "0" * 64
    path.write_text(json.dumps(entry, indent=2))


def altered_array(path):
    npz = path.with_suffix(".npz")
    np.savez(npz, a0=np.zeros(2))


def missing_array(path):
    path.with_suffix(".npz").unlink()


def not_an_entry(path):
    path.write_text(json.dumps({"format": "medmtl-cell-1", "value": 1}))


def other_cells_entry(path):
    # a sound entry of another cell copied under this cell's name
    other = next(p for p in path.parent.glob("*.json") if p != path)
    shutil.copy(other, path)
    shutil.copy(other.with_suffix(".npz"), path.with_suffix(".npz"))


DAMAGE = [truncate, empty, random_bytes, altered_number, reformatted, altered_array, missing_array,
          not_an_entry, other_cells_entry]


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__)
def test_a_damaged_entry_is_named_discarded_and_recomputed(damage, tmp_path):
    log = tmp_path / "log"
    cells = [{"a": a, "log": str(log)} for a in (1, 2)]
    options = RunOptions(cache_dir=tmp_path / "cache", progress=False)
    first = run_grid(counted, cells, name="damage", options=options)
    path = CellCache(tmp_path / "cache", "damage").path(cells[0])
    damage(path)
    with pytest.warns(CacheWarning, match=f"damaged experiment cache entry {re.escape(str(path))}: .*recomputed"):
        again = run_grid(counted, cells, name="damage", options=options)
    assert same(again, first)
    assert log.read_text().split() == ["1", "2", "1"]  # only the damaged cell ran again
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the recomputed entry is sound
        assert same(run_grid(counted, cells, name="damage", options=options), first)
    assert log.read_text().split() == ["1", "2", "1"]


def test_a_failed_write_leaves_no_entry_and_no_temporary_file(tmp_path, monkeypatch):
    cache = CellCache(tmp_path, "atomic", code="c", data="d")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(cache_module.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        cache.store({"a": 1}, {"x": np.arange(3)})
    assert list((tmp_path / "atomic").iterdir()) == []


# ----------------------------------------------------------------------------- fingerprints
def test_the_key_ignores_the_order_of_the_settings(tmp_path):
    cache = CellCache(tmp_path, "order", code="c", data="d")
    assert cache.path({"a": 1, "b": [2, 3]}) == cache.path({"b": [2, 3], "a": 1})
    assert cache.path({"a": 1}) != cache.path({"a": 1.0}) != cache.path({"a": True})
    assert cache.path({"a": 1}) != CellCache(tmp_path, "other", code="c", data="d").path({"a": 1})


def test_changed_code_or_data_fingerprints_reach_other_entries(tmp_path):
    cell = {"a": 1}
    CellCache(tmp_path, "fp", code="code-1", data="data-1").store(cell, 1.0)
    assert CellCache(tmp_path, "fp", code="code-1", data="data-1").load(cell) == (True, 1.0)
    assert CellCache(tmp_path, "fp", code="code-2", data="data-1").load(cell) == (False, None)
    assert CellCache(tmp_path, "fp", code="code-1", data="data-2").load(cell) == (False, None)


def test_the_run_uses_the_current_code_fingerprint(tmp_path, monkeypatch):
    log = tmp_path / "log"
    cells = [{"a": 1, "log": str(log)}]
    options = RunOptions(cache_dir=tmp_path / "cache", progress=False)
    run_grid(counted, cells, name="code", options=options)
    run_grid(counted, cells, name="code", options=options)
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "edited source")
    run_grid(counted, cells, name="code", options=options)
    assert log.read_text().split() == ["1", "1"]


def fresh_code_fingerprint():
    code_fingerprint.cache_clear()
    try:
        return code_fingerprint()
    finally:
        code_fingerprint.cache_clear()


def test_code_fingerprint_covers_the_package_sources_and_library_versions(tmp_path, monkeypatch):
    assert code_fingerprint() == code_fingerprint()  # once per process
    package = tmp_path / "medmtl"
    (package / "experiments").mkdir(parents=True)
    (package / "experiments" / "cell.py").write_text("def cell(a):\n    return a\n")
    (package / "experiments" / "notes.txt").write_text("not source\n")
    monkeypatch.setattr(cache_module, "__file__", str(package / "experiments" / "cache.py"))
    sources = fresh_code_fingerprint()
    (package / "experiments" / "notes.txt").write_text("changed\n")
    assert fresh_code_fingerprint() == sources
    (package / "experiments" / "cell.py").write_text("def cell(a):\n    return 2 * a\n")
    edited = fresh_code_fingerprint()
    assert edited != sources

    real = cache_module.metadata.version
    monkeypatch.setattr(cache_module.metadata, "version",
                        lambda name: "0.0" if name == "scikit-learn" else real(name))
    assert fresh_code_fingerprint() != edited


def dermatology_labels(cell):
    from medmtl.datasets import load_dermatology

    ys = load_dermatology().ys
    return {"weighted_labels": [float(np.dot(np.arange(y.size), y)) for y in ys]}


def permuted_copy(folder, seed):
    """A data folder holding Dermatology with its class column permuted, and its own manifest."""
    from medmtl.datasets.sources import build_manifest

    source = ROOT / "data" / "uci_dermatology" / "dermatology.data"
    rows = [line.split(",") for line in source.read_text().splitlines() if line.strip()]
    labels = np.random.default_rng(seed).permutation([r[-1] for r in rows])
    (folder / "uci_dermatology").mkdir(parents=True)
    (folder / "uci_dermatology" / "dermatology.data").write_text(
        "\n".join(",".join(r[:-1] + [lab]) for r, lab in zip(rows, labels)) + "\n")
    (folder / "MANIFEST.json").write_text(json.dumps(build_manifest(folder), indent=1))
    return folder


def test_other_data_under_medmtl_data_is_recomputed_not_read_from_the_cache(tmp_path, monkeypatch):
    options = RunOptions(cache_dir=tmp_path / "cache", progress=False)
    cells = [{"seed": 0}]
    monkeypatch.delenv("MEDMTL_DATA", raising=False)
    bundled = run_grid(dermatology_labels, cells, name="data", options=options)
    bundled_fingerprint = data_fingerprint()

    monkeypatch.setenv("MEDMTL_DATA", str(permuted_copy(tmp_path / "permuted", 1)))
    assert data_fingerprint() != bundled_fingerprint
    permuted = run_grid(dermatology_labels, cells, name="data", options=options)
    assert permuted != bundled

    # the same file changed without a new manifest: no old number, the loader's error
    target = tmp_path / "permuted" / "uci_dermatology" / "dermatology.data"
    lines = target.read_text().splitlines()
    target.write_text("\n".join(lines[1:] + lines[:1]) + "\n")
    os.utime(target, ns=(1, 1))  # a new file version even on a coarse-clocked file system
    with pytest.raises(RuntimeError, match="dermatology.data"):
        run_grid(dermatology_labels, cells, name="data", options=options, retries=0)

    monkeypatch.delenv("MEDMTL_DATA")
    assert data_fingerprint() == bundled_fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_grid(dermatology_labels, cells, name="data", options=options) == bundled


# ------------------------------------------------------------------------------------ clear
def test_clear_cache_removes_one_grid_or_all_and_only_cache_files(tmp_path):
    for name in ("one", "two"):
        CellCache(tmp_path, name, code="c", data="d").store({"a": 1}, {"x": np.zeros(2)})
    (tmp_path / "one" / "old.pkl").write_bytes(b"old")
    (tmp_path / "two" / "notes.txt").write_text("mine")
    assert clear_cache(tmp_path, "one") == 3
    assert not (tmp_path / "one").exists()
    assert CellCache(tmp_path, "two", code="c", data="d").load({"a": 1})[0]
    assert clear_cache(tmp_path) == 2
    assert [p.name for p in (tmp_path / "two").iterdir()] == ["notes.txt"]
    assert clear_cache(tmp_path / "nothing-here") == 0



# ------------------------------------------------------------------------- unwritable folders
def _unwritable(folder, fill=None):
    """``folder``, made so that nothing can be written in it, after ``fill(folder)``.

    Its write permissions are removed; where that does not stop writes (running as root),
    the folder becomes a regular file, under which nobody can write, and a folder that has
    to be partly filled first is skipped.
    """
    folder.mkdir(parents=True)
    if fill is not None:
        fill(folder)
    for path in [*folder.rglob("*"), folder]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    probe = folder / "probe"
    try:
        probe.write_text("")
    except OSError:
        return folder
    probe.unlink()
    if fill is not None:
        pytest.skip("running as root: removing write permissions does not stop writes, and a partly filled "
                    "folder cannot be a regular file")
    folder.chmod(0o755)
    folder.rmdir()
    folder.write_text("a regular file where the cache folder would be")
    return folder


@pytest.fixture
def restore_permissions(tmp_path):
    yield
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # so that pytest can remove tmp_path


def _fill(folder):
    """Store one cell of the grid "partial" in ``folder``."""
    run_grid(counted, [{"a": 1, "log": str(folder.parent / "fill-log")}], name="partial",
             options=RunOptions(cache_dir=folder, progress=False))


FILLS = pytest.mark.parametrize("fill", [None, _fill], ids=["empty", "partly filled"])


@FILLS
@pytest.mark.parametrize("how", ["cache_dir", "MEDMTL_CACHE"])
def test_a_chosen_cache_folder_that_cannot_be_written_is_an_error_before_any_cell(
        tmp_path, monkeypatch, restore_permissions, fill, how):
    folder = _unwritable(tmp_path / "cache", fill)
    log = tmp_path / "log"
    cells = [{"a": a, "log": str(log)} for a in (1, 2)]
    if how == "MEDMTL_CACHE":
        monkeypatch.setenv("MEDMTL_CACHE", str(folder))
        options = RunOptions(progress=False)
    else:
        options = RunOptions(cache_dir=folder, progress=False)
    expected = f"cache folder {re.escape(str(folder / 'partial'))} cannot be written .*--no-cache"
    with pytest.raises(PermissionError, match=expected):
        run_grid(counted, cells, name="partial", options=options)
    assert not log.exists()  # raised before the first cell
    uncached = run_grid(counted, cells, name="partial", options=RunOptions(use_cache=False, progress=False))
    assert log.read_text().split() == ["1", "2"]
    assert same(uncached, [counted({**c, "log": str(tmp_path / "other-log")}) for c in cells])


@FILLS
def test_the_default_cache_folder_that_cannot_be_written_warns_and_runs_uncached(
        tmp_path, monkeypatch, restore_permissions, fill):
    monkeypatch.delenv("MEDMTL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    folder = default_cache_dir()
    assert folder == tmp_path / "user-cache" / "medmtl" / "experiments"
    _unwritable(folder, fill)
    log = tmp_path / "log"
    cells = [{"a": a, "log": str(log)} for a in (1, 2)]
    for run in (1, 2):  # nothing was stored: the second run computes every cell again
        with pytest.warns(CacheWarning, match="default experiment cache folder .* cannot be written .*running "
                                              "without the cache"):
            values = run_grid(counted, cells, name="partial", options=RunOptions(cache_dir=folder, progress=False))
        assert same(values, [counted({**c, "log": str(tmp_path / "other-log")}) for c in cells])
        assert log.read_text().split() == ["1", "2"] * run


def test_the_command_line_names_a_cache_folder_that_cannot_be_written(tmp_path, restore_permissions, capsys):
    from medmtl.experiments import cli

    folder = _unwritable(tmp_path / "cache")
    status = cli.main(["reproduce", "dermatology", "--quick", "--out", str(tmp_path / "out"),
                       "--cache-dir", str(folder)])
    assert status == 2
    assert re.search(f"medmtl: the experiment cache folder {re.escape(str(folder))}.* cannot be written",
                     capsys.readouterr().err)


def test_clearing_a_cache_folder_that_cannot_be_written_is_a_clear_error(tmp_path, restore_permissions):
    folder = _unwritable(tmp_path / "cache", _fill)
    with pytest.raises(PermissionError, match=f"cannot clear the experiment cache folder "
                                              f"{re.escape(str(folder / 'partial'))}"):
        clear_cache(folder, "partial")
