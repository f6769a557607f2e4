"""The row store: appends that never rewrite the file, and killed appends that lose no earlier row."""
import os
import signal
import subprocess
import sys
from pathlib import Path

from hpstrat_lite.rows import append_rows, read_rows

REPO = Path(__file__).resolve().parents[2]


def test_append_writes_the_header_once_and_does_not_rewrite_the_file(tmp_path):
    path = tmp_path / "rows.csv"
    append_rows(path, [{"seed": 0, "acc": 0.5}])
    before, inode = path.read_bytes(), path.stat().st_ino
    append_rows(path, [{"acc": 0.625, "seed": 1}, {"seed": 2, "acc": 0.75}])  # another key order
    assert path.stat().st_ino == inode and path.read_bytes().startswith(before)
    assert path.read_text() == "seed,acc\n0,0.5\n1,0.625\n2,0.75\n"
    append_rows(path, [{"seed": 3}])  # a subset of the columns: appended with an empty cell
    assert path.stat().st_ino == inode and path.read_text().endswith("\n3,\n")
    append_rows(path, [])
    assert path.stat().st_ino == inode and len(read_rows(path)) == 4


def test_new_columns_rewrite_the_file_once_with_the_union(tmp_path):
    path = tmp_path / "rows.csv"
    append_rows(path, [{"seed": 0, "acc": 0.5}])
    append_rows(path, [{"seed": 1, "acc": 0.6, "host": "x"}])
    rows = read_rows(path)
    assert rows.columns.tolist() == ["seed", "acc", "host"] and rows["seed"].tolist() == [0, 1]
    assert rows["host"].isna().tolist() == [True, False]
    append_rows(path, [{"seed": 2, "acc": 0.7}])
    assert read_rows(path)["seed"].tolist() == [0, 1, 2]


def test_a_partial_last_line_is_skipped_by_readers_and_cut_by_the_next_append(tmp_path):
    path = tmp_path / "rows.csv"
    append_rows(path, [{"seed": i, "acc": i / 10} for i in range(3)])
    with open(path, "a") as fh:
        fh.write("3,0.")  # a writer killed in the middle of a row
    rows = read_rows(path)
    assert rows["seed"].tolist() == [0, 1, 2] and rows["acc"].tolist() == [0.0, 0.1, 0.2]
    append_rows(path, [{"seed": 3, "acc": 0.3}])
    assert path.read_text().endswith("2,0.2\n3,0.3\n")
    assert read_rows(path)["seed"].tolist() == [0, 1, 2, 3]
    path.write_text("seed,a")  # a header cut short: the file holds no row yet and is written anew
    assert read_rows(path).empty
    append_rows(path, [{"seed": 9}])
    assert read_rows(path)["seed"].tolist() == [9]


KILLED_WRITER = """
import os, resource, signal, sys
from hpstrat_lite.rows import append_rows
path, batch = sys.argv[1], 5000
def rows(b):
    return [{"batch": b, "i": i, "check": b * 100003 + i, "name": f"row-{b}-{i}"} for i in range(batch)]
append_rows(path, rows(0))
append_rows(path, rows(1))
# the kernel stops the third append's write 100007 bytes in and kills the process (SIGXFSZ; Python ignores
# that signal unless told otherwise)
limit = os.path.getsize(path) + 100007
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
append_rows(path, rows(2))
"""


def test_a_process_killed_while_appending_loses_no_earlier_row(tmp_path):
    """A real writer killed by the kernel in the middle of its third append: every row of the first two is
    read back intact and in order, the partial row is skipped, and the next append works."""
    path = tmp_path / "rows.csv"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], env=env, capture_output=True)
    assert done.returncode == -signal.SIGXFSZ, done.stderr.decode()
    assert not path.read_bytes().endswith(b"\n")  # killed in the middle of a row
    rows = read_rows(path)
    assert 10000 < len(rows) < 15000
    assert (rows["check"] == rows["batch"] * 100003 + rows["i"]).all()
    assert (rows["name"] == "row-" + rows["batch"].astype(str) + "-" + rows["i"].astype(str)).all()
    assert (rows["batch"] * 5000 + rows["i"]).tolist() == list(range(len(rows)))  # a prefix, in order
    append_rows(path, [{"batch": -1, "i": 0, "check": -100003, "name": "row--1-0"}])
    again = read_rows(path)
    assert len(again) == len(rows) + 1 and again.iloc[:-1].equals(rows)
