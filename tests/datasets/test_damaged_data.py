"""Every damaged copy of every data file gives a clear error naming the file.

The checksum refuses each copy before any parser sees it (so a damaged ``.mat`` never
reaches ``scipy.io.loadmat``); with the checksum bypassed (the folder's own manifest lists
the damaged file's hash), the text parsers and the shape checks still refuse the damages
that change the data's structure. ``python tests/datasets/data_damage.py`` counts the
outcomes, each load in its own process.
"""

import re

import pytest

from medmtl import datasets
from medmtl.datasets import DataFileError, data_home

from data_damage import READERS, TEXT_DAMAGES, Damage, _is_text, all_damages, make_damaged_copy


@pytest.mark.parametrize("damage", all_damages(), ids=str)
def test_every_damaged_copy_is_refused_before_parsing(damage, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDMTL_DATA", str(make_damaged_copy(data_home(), damage, tmp_path)))
    for key in damage.readers:
        with pytest.raises(DataFileError, match=rf"data file .*{re.escape(damage.file)} "
                                                r"(is empty|has \d+ bytes but|has SHA-256)"):
            READERS[key](datasets)


# The smallest file of each text format; "one bit" and "flipped" may leave a valid number.
_BYPASS = [Damage(rel, kind)
           for rel in ("uci_dermatology/dermatology.data", "uci_splice/splice.csv", "statlog_dna/dna.scale.t",
                       "uci_statlog_heart/heart.dat", "boston_housing/housing.data", "nci60/NCI60.csv.gz",
                       "blitzer_sentiment/processed_acl/kitchen/negative.review.gz")
           for kind in ("truncated", "empty") + TEXT_DAMAGES]


def test_the_bypass_cases_are_text_files():
    assert all(_is_text(d.file) for d in _BYPASS) and len(_BYPASS) == 35


@pytest.mark.parametrize("damage", _BYPASS, ids=str)
def test_text_parsers_and_shape_checks_refuse_damage_without_the_checksum(damage, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDMTL_DATA", str(make_damaged_copy(data_home(), damage, tmp_path, bypass_checksums=True)))
    for key in damage.readers:
        with pytest.raises(DataFileError, match=re.escape(damage.file.rsplit("/", 1)[-1])):
            READERS[key](datasets)
