"""The book's notebooks: structure, change detection, scorecard logic, and a smoke run of every notebook.

The smoke run executes every notebook of the ``smoke`` profile (book/notebooks.yml: Texas, small
settings) with papermill on real data (HPSTRAT_DATA) into a staging folder; tests/book/test_book.py builds
the HTML book from the same folder, so the notebooks run once per pytest run.
"""
import hashlib
import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import yaml

import hpstrat_book.build as book

from hpstrat_book.plots import stratum_spread
from conftest import SMOKE_OUT, bins_oracle, build_smoke_book
from hpstrat_book import scorecard
from hpstrat_book.hpstrat import complete_pairs


PART2_PREFIXES = ("06_", "06b_", "07_", "08_", "09_")  # Part II chapters train and tune models

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------------------------
# Structure (fast)


def test_every_chapter_has_a_parameters_cell_and_exercises_with_hidden_solutions():
    names = {job["name"] for job in book.plan("full")}
    assert {"01_method", "02_fold_metrics", "02b_fold_metrics_summary", "03_gnn_experiments", "04_appendix_b",
            "05_appendix_g", "scorecard"} <= names
    pages = {Path(job["notebook"]).stem: job["page"] for job in book.plan("full")}
    for name, page in pages.items():
        nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert "parameters" in first_code.metadata.get("tags", []), name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{name} has saved outputs"
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        if page:  # a chapter with a hand-written page: its exercises are there or in its notebook
            text = (REPO / f"{page}.md").read_text() + "\n" + text
        assert re.search(r"^(?:## |```\{rubric\} )Exercises$", text, re.M), name  # a heading or a page's rubric
        solutions = re.findall(r"^`{3,}\{solution\}[^\n]*\n(?::[a-z]+:[^\n]*\n)*", text, re.M)
        assert len(solutions) >= 2, f"{name}: fewer than two exercises with solutions"
        assert all(":class: dropdown" in head for head in solutions), f"{name}: a solution is not folded"
        assert nb.metadata["kernelspec"]["name"] == "python3"


def test_plan_parameters_match_each_notebooks_parameters_cell():
    for profile in book.PROFILES:
        for job in book.plan(profile):
            nb = nbformat.read(REPO / job["notebook"], as_version=4)
            cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
            declared = {line.split("=")[0].strip() for line in cell.source.splitlines() if "=" in line}
            assert set(job["parameters"]) <= declared, (job["output"], set(job["parameters"]) - declared)


def test_plan_runs_per_dataset_chapters_once_per_dataset_and_smoke_stays_small():
    cfg = book.load_config()
    full, smoke = book.plan("full", cfg), book.plan("smoke", cfg)
    per_dataset = [j for j in full if j["name"] == "01_method"]
    assert [j["parameters"]["dataset"] for j in per_dataset] == cfg["datasets"]["full"]
    assert [j["first"] for j in per_dataset] == [True] + [False] * (len(per_dataset) - 1)
    assert per_dataset[0]["output"] == "book/executed/01_method/cora.ipynb"
    assert all(j["parameters"].get("dataset", "Texas") == "Texas" for j in smoke)
    # Part I chapters run on Texas; Part II chapters name their own small datasets (Cora, WS1000, Twitch)
    assert all(j["parameters"].get("datasets", ["Texas"]) == ["Texas"] for j in smoke
               if not j["name"].startswith(PART2_PREFIXES))
    assert {j["name"] for j in smoke} == {j["name"] for j in full}  # every page, so every link is checked
    gnn = {p: next(j for j in book.plan(p, cfg) if j["name"] == "03_gnn_experiments") for p in book.PROFILES}
    assert gnn["full"]["reads"] == ["results/gnn_k4_*.csv"] and "recompute" not in gnn["full"]["parameters"]
    assert gnn["smoke"]["reads"] == [] and gnn["smoke"]["parameters"]["recompute"] is True  # never reads results/
    # the timing appendix shows the projection and the timed sweeps: a new projection re-executes it
    pages = [j for j in full if j["notebook"] == "notebooks/03_gnn_experiments.ipynb"]
    running = next(j for j in full if j["name"] == "appendix_running")
    assert len(pages) == 3 and {"results/sweep_projection.csv", "results/timed_*.csv"} <= set(running["reads"])


def test_committed_toc_is_generated_from_the_config_and_its_pages_exist():
    cfg = book.load_config()
    jobs = book.plan("full", cfg)
    text = (REPO / "_toc.yml").read_text()
    assert text == book.TOC_HEADER + yaml.safe_dump(book.toc(jobs, cfg), sort_keys=False, allow_unicode=True), \
        "_toc.yml is out of date: run `python -m hpstrat_book.build --toc`"
    files = [cfg["root"]] + [e["file"] for part in book.toc(jobs, cfg)["parts"] for ch in part["chapters"]
                             for e in [ch] + ch.get("sections", [])]
    missing = [f for f in files if not any((REPO / f"{f}{ext}").exists() for ext in (".md", ".ipynb"))]
    assert not missing, f"pages in _toc.yml without a file (run `make book`): {missing}"


def test_write_toc_writes_only_when_the_toc_changes(tmp_path):
    cfg = book.load_config()
    path = tmp_path / "_toc.yml"
    assert book.write_toc(book.plan("smoke", cfg), path, cfg) is True
    assert book.write_toc(book.plan("smoke", cfg), path, cfg) is False
    assert path.read_text().startswith(book.TOC_HEADER) and "root: book/intro" in path.read_text()
    assert book.write_toc(book.plan("full", cfg), path, cfg) is True  # more pages: rewritten


def test_bins_table_computes_hpstrat_per_b_and_the_references_once(data_root):
    from hpstrat_lite import quality_table

    t = scorecard.bins_table(["Cornell"], bins=(2, 10), k=4, seeds=range(2))
    hp = t[t["method"] == "hpstrat"]
    assert sorted(hp["n_bins"].unique()) == [2, 10] and len(hp) == 4
    ref = t[t["method"] != "hpstrat"]
    assert sorted(ref["method"].unique()) == ["random", "stratified"] and ref["n_bins"].isna().all() and len(ref) == 4
    direct = quality_table(["Cornell"], k=4, seeds=range(2), n_bins=2, methods=["hpstrat"])
    np.testing.assert_allclose(hp[hp["n_bins"] == 2][["sdd", "cdd", "chd", "w1"]].to_numpy(),
                               direct[["sdd", "cdd", "chd", "w1"]].to_numpy())
    assert not np.allclose(hp[hp["n_bins"] == 2]["chd"].to_numpy(), hp[hp["n_bins"] == 10]["chd"].to_numpy())


def test_the_provenance_page_names_each_dataset_missing_from_the_data_root(data_root):
    """The datasets the book could not include are named on the page "Data, reruns and provenance", once."""
    from hpstrat_lite.data.datasets import HPSTRAT_DATASETS, available_datasets

    missing = [d for d in HPSTRAT_DATASETS if d not in set(available_datasets(data_root))]
    page = (REPO / "book" / "provenance.md").read_text()
    section = page[page.index("## The datasets"):page.index("## Reruns")]
    for name in missing:
        assert f"**{name}**" in section, name


def test_config_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="profile must be one of"):
        book.plan("fast")
    with pytest.raises(FileNotFoundError, match="book config"):
        book.load_config(tmp_path / "none.yml")
    bad = tmp_path / "bad.yml"
    bad.write_text("datasets: {full: [Cora]}\nroot: book/intro\nparts: []\n")
    with pytest.raises(ValueError, match="profile 'smoke'"):
        book.load_config(bad)
    with pytest.raises(ValueError, match="only names unknown chapter"):
        book.build_book("smoke", build=False, only=["nope"], out_dir=tmp_path / "stage")


# ----------------------------------------------------------------------------------------------
# Change detection (fast, on a throw-away repository)


def fake_repo(tmp_path):
    (tmp_path / "hpstrat_lite").mkdir()
    (tmp_path / "hpstrat_lite" / "a.py").write_text("x = 1\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "ch.ipynb").write_text("{}")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "rows.csv").write_text("a\n1\n")
    job = {"name": "ch", "notebook": "notebooks/ch.ipynb", "output": "book/executed/ch.ipynb",
           "parameters": {"dataset": "Texas"}, "title": None, "reads": ["results/*.csv"]}
    (tmp_path / "book" / "executed").mkdir(parents=True)
    (tmp_path / job["output"]).write_text("{}")
    return job


def test_only_changed_inputs_trigger_re_execution(tmp_path):
    job = fake_repo(tmp_path)
    assert book.stale_reasons(job, tmp_path, {}, repo=tmp_path) == ["not in manifest"]
    manifest = {job["output"]: {"inputs": book.input_hashes(job, tmp_path)}}
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == []
    edits = {"library": lambda: (tmp_path / "hpstrat_lite" / "a.py").write_text("x = 2\n"),
             "reads": lambda: (tmp_path / "results" / "rows.csv").write_text("a\n2\n"),
             "notebook": lambda: (tmp_path / "notebooks" / "ch.ipynb").write_text('{"cells": []}')}
    for name, edit in edits.items():
        edit()
        assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == [name]
        manifest = {job["output"]: {"inputs": book.input_hashes(job, tmp_path)}}
    assert book.stale_reasons(dict(job, parameters={"dataset": "Cora"}), tmp_path, manifest,
                              repo=tmp_path) == ["parameters"]
    (tmp_path / "results" / "more.csv").write_text("b\n")  # a new results file is a changed input
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == ["reads"]
    (tmp_path / job["output"]).unlink()
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == ["no executed notebook"]


def test_library_input_covers_only_the_modules_the_notebook_loaded(tmp_path):
    job = fake_repo(tmp_path)
    (tmp_path / "hpstrat_lite" / "__init__.py").write_text("")
    (tmp_path / "hpstrat_lite" / "sub").mkdir()
    (tmp_path / "hpstrat_lite" / "sub" / "__init__.py").write_text("")
    modules = ["hpstrat_lite", "hpstrat_lite.a", "hpstrat_lite.sub"]
    assert book.module_files(modules, tmp_path) == [tmp_path / "hpstrat_lite" / "__init__.py",
                                                    tmp_path / "hpstrat_lite" / "a.py",
                                                    tmp_path / "hpstrat_lite" / "sub" / "__init__.py"]
    manifest = {job["output"]: {"inputs": book.input_hashes(job, tmp_path, modules=modules), "modules": modules}}
    (tmp_path / "hpstrat_lite" / "unused.py").write_text("y = 1\n")  # not loaded by the notebook
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == []
    (tmp_path / "hpstrat_lite" / "sub" / "__init__.py").write_text("z = 0\n")
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == ["library"]
    (tmp_path / "hpstrat_lite" / "sub" / "__init__.py").write_text("")
    (tmp_path / "hpstrat_lite" / "a.py").unlink()  # a deleted module is a change
    assert book.stale_reasons(job, tmp_path, manifest, repo=tmp_path) == ["library"]


def test_title_injection_and_output_checks():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_markdown_cell("# The method\n\ntext")])
    book._set_title(nb, "The method on Texas")
    assert nb.cells[1].source == "# The method on Texas\n\ntext"
    assert book.output_problems(nb) == []
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stderr", text="UserWarning: x")]
    nb.cells.append(nbformat.v4.new_code_cell("1/0", outputs=[nbformat.v4.new_output(
        "error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])]))
    problems = book.output_problems(nb)
    assert len(problems) == 2 and "stderr" in problems[0] and "ZeroDivisionError" in problems[1]


# ----------------------------------------------------------------------------------------------
# Summaries and scorecard logic (fast, synthetic tables)


def quality_rows(values):
    """values: {dataset: {method: (sdd, cdd, chd)}} -> quality_table-like rows over two seeds."""
    rows = [{"dataset": d, "method": m, "seed": s, "sdd": v[0], "cdd": v[1], "chd": v[2], "w1": v[2]}
            for d, per in values.items() for m, v in per.items() for s in (0, 1)]
    return pd.DataFrame(rows)


def test_table2_claims_hold_by_construction_only_when_they_hold_on_every_dataset():
    good = {"random": (0.5, 9.0, 0.01), "stratified": (0.5, 0.3, 0.008), "hpstrat": (0.5, 0.9, 0.001)}
    card = scorecard.fold_metric_claims(quality_rows({"A": good, "B": good}))
    assert card["verdict"].tolist() == ["holds by construction"] * 4  # counted apart from reproductions
    assert card["rule"].str.startswith("by construction").all()
    assert card["ours"].tolist() == ["2/2 datasets"] * 4
    bad = {"random": (0.5, 0.1, 0.01), "stratified": (0.25, 0.3, 0.0005), "hpstrat": (0.5, 0.9, 0.001)}
    card = scorecard.fold_metric_claims(quality_rows({"A": good, "B": bad})).set_index("claim")
    assert (card["verdict"] == "disagrees").all()
    assert card["ours"].str.contains(r"1/2 datasets \(not on B\)").all()


def test_fold_metric_ranks_rank_within_dataset_and_average():
    q = quality_rows({"A": {"random": (1, 3, 3), "stratified": (1, 1, 2), "hpstrat": (1, 2, 1)},
                      "B": {"random": (1, 3, 2), "stratified": (1, 1, 3), "hpstrat": (1, 2, 1)}})
    per, mean = scorecard.fold_metric_ranks(q)
    assert list(per.index) == ["A", "B"]
    assert list(mean.columns) == ["random", "stratified", "hpstrat"]
    assert mean.loc["sdd"].tolist() == [2.0, 2.0, 2.0]
    assert mean.loc["cdd"].tolist() == [3.0, 1.0, 2.0]
    assert mean.loc["chd"].tolist() == [2.5, 2.5, 1.0]


def test_bins_claims_name_the_failing_dataset_and_b():
    rows = [{"dataset": "A", "method": "hpstrat", "n_bins": b, "seed": 0, "chd": c, "cdd": 1.0, "w1": c}
            for b, c in [(2, 0.02), (10, 0.001)]]
    rows += [{"dataset": "A", "method": m, "n_bins": np.nan, "seed": 0, "chd": 0.01, "cdd": 1.0, "w1": 0.01}
             for m in ("random", "stratified")]
    card = scorecard.bins_claims(pd.DataFrame(rows))
    assert card.loc[0, "verdict"] == "disagrees" and "A (B=2)" in card.loc[0, "ours"]
    ranks = scorecard.bins_ranks(pd.DataFrame(rows))
    assert ranks.loc[10, "chd mean rank"] == 1.0 and ranks.loc[2, "chd mean rank"] == 3.0


def test_stratum_spread_reports_hpstrat_dealing():
    from hpstrat_lite import hpstrat_folds

    rng = np.random.default_rng(0)
    h, y = rng.uniform(size=500), rng.integers(0, 4, 500)
    h[:5] = np.nan
    t = stratum_spread(h, y, hpstrat_folds(h, y, k=4, n_bins=5, seed=1), k=4, n_bins=5)
    folds = hpstrat_folds(h, y, k=4, n_bins=5, seed=1)
    assert t["size"].sum() == 500 and t["spread"].max() <= 1
    assert t["bin"].iloc[-1] == 5  # isolated nodes: their own, last stratum
    # checked against the folds themselves: each stratum's counts, and its extra nodes (size mod k) sit in
    # the folds first, first + 1, ... where the table says HpStrat started dealing it
    bins = bins_oracle(h, 5)
    for _, row in t.iterrows():
        counts = np.bincount(folds[(bins == row["bin"]) & (y == row["class"])], minlength=4)
        assert counts.tolist() == [row[f"fold {i}"] for i in range(4)] and counts.sum() == row["size"]
        extra = [(row["first fold"] + j) % 4 for j in range(row["size"] % 4)]
        assert sorted(np.flatnonzero(counts > row["size"] // 4).tolist()) == sorted(extra)


def test_fold_homophily_table_agrees_with_chd_and_metric_summary_with_the_rows():
    from hpstrat_lite import fold_quality, make_folds
    from hpstrat_book.plots import fold_homophily_table, metric_summary

    rng = np.random.default_rng(3)
    h, y = rng.beta(2, 5, 300), rng.integers(0, 3, 300)
    h[:7] = np.nan
    folds = {m: make_folds(m, h, y, k=4, seed=2) for m in ("random", "stratified", "hpstrat")}
    t = fold_homophily_table(h, folds, 4)
    assert list(t["method"].unique()) == ["random", "stratified", "hpstrat"]
    for m, f in folds.items():
        part = t[t["method"] == m]
        assert part["nodes"].tolist() == np.bincount(f, minlength=4).tolist()
        assert part["deviation"].abs().mean() == pytest.approx(fold_quality(f, y, h, k=4)["chd"])
    rows = pd.DataFrame([{"dataset": "D", "method": m, "seed": s, **fold_quality(make_folds(m, h, y, k=4, seed=s), y, h, k=4)}
                         for m in ("hpstrat", "random") for s in range(3)])
    summary = metric_summary(rows, metrics=("chd",), digits=6)
    assert list(summary.index.get_level_values("method")) == ["random", "hpstrat"]  # the book's order
    chd = rows[rows["method"] == "random"]["chd"]
    assert summary.iloc[0, 0] == f"{chd.mean():.6f} ± {chd.std(ddof=1):.6f}"


def sweep_rows(spread, datasets=("A", "B", "C"), models=("GCN", "GAT", "MLP"), k=4):
    """run_experiment-like rows whose cross-fold std is ``spread[method]`` times a per-block factor."""
    rows = []
    for i, d in enumerate(datasets):
        for j, m in enumerate(models):
            for method, s in spread.items():
                dev = np.linspace(-1.5, 1.5, k) * s * (1 + 0.1 * i + 0.01 * j) / 100
                acc = 0.6 + 0.05 * j + (0.1 if (m, method) == ("GCN", "hpstrat") and d == "A" else 0)
                rows += [{"dataset": d, "model": m, "method": method, "k": k, "seed": 0, "fold": f,
                          "test_acc": acc + dev[f], "test_homophily": 0.5} for f in range(k)]
    return pd.DataFrame(rows)


def test_complete_pairs_drop_pairs_with_missing_methods_or_folds():
    rows = sweep_rows({"random": 3.0, "stratified": 2.0, "hpstrat": 1.0})
    cut = rows[~((rows["dataset"] == "B") & (rows["model"] == "GAT") & (rows["method"] == "hpstrat"))]
    cut = cut[~((cut["dataset"] == "C") & (cut["model"] == "GCN") & (cut["fold"] == 3))]
    kept, coverage = complete_pairs(cut)
    assert len(kept) == len(rows) - 2 * 12
    cov = coverage.set_index("dataset")
    gaps = cov["models missing or incomplete"]
    assert gaps["B"] == "GAT" and gaps["C"] == "GCN"
    _, coverage = complete_pairs(rows[(rows["dataset"] == "A") | (rows["model"] != "MLP")])
    assert coverage.set_index("dataset").loc["B", "models missing or incomplete"] == "MLP"  # no rows at all
    assert cov.loc["A", "models complete"] == "GAT, GCN, MLP"


def test_complete_pairs_need_every_seed_of_a_multi_seed_protocol():
    rows = sweep_rows({"random": 3.0, "stratified": 2.0, "hpstrat": 1.0})
    seed1 = rows[rows["dataset"] != "C"].assign(seed=1)  # dataset C has seed 0 only
    both = pd.concat([rows, seed1], ignore_index=True)
    kept, coverage = complete_pairs(both)
    assert set(kept["dataset"]) == {"A", "B"} and set(kept["seed"]) == {0, 1}
    assert coverage.set_index("dataset").loc["C", "models missing or incomplete"] == "GCN, GAT, MLP"
    kept, _ = complete_pairs(both, seeds=[0])  # one seed asked for: C counts, seed 1 rows are left out
    assert set(kept["dataset"]) == {"A", "B", "C"} and set(kept["seed"]) == {0}
    kept, _ = complete_pairs(both, seeds=[0, 1, 2])  # seed 2 has no rows anywhere
    assert kept.empty


def test_appendix_b_claims_count_significant_pairs():
    rng = np.random.default_rng(0)
    h = rng.uniform(0.2, 0.8, 200)
    rows = pd.DataFrame({"dataset": np.repeat(["A", "B"], 100), "model": "GCN", "test_homophily": h,
                         "test_acc": np.r_[0.5 + 0.4 * h[:100], 0.7 * np.ones(100)] + rng.normal(0, 0.05, 200)})
    card = scorecard.appendix_b_claims(rows)
    assert card.loc[0, "ours"].startswith("significant on 1/2 pairs (A/GCN)") and card.loc[0, "verdict"] == "disagrees"
    assert card.loc[1, "verdict"] == "disagrees" and "(0/1 in the paper's range)" in card.loc[1, "ours"]  # R² ~ 0.6
    rows.loc[rows["dataset"] == "B", "test_acc"] = 0.5 + 0.4 * h[100:] + rng.normal(0, 0.05, 100)
    assert scorecard.appendix_b_claims(rows).loc[0, "verdict"] == "agrees"
    noisy = rows.assign(test_acc=0.5 + 0.1 * rows["test_homophily"] + rng.normal(0, 0.05, 200))
    card = scorecard.appendix_b_claims(noisy)  # a weak effect: R² inside the paper's range
    assert card["verdict"].tolist() == ["agrees", "agrees"], card["ours"].tolist()


def _stdout(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")


# ----------------------------------------------------------------------------------------------
# Smoke run of every notebook on real data


@pytest.mark.slow
@pytest.mark.xdist_group("smoke_book")  # the smoke book is built once, in one test worker (see tests/book/test_book.py)
def test_every_notebook_runs_on_real_data_without_errors_or_warnings(data_root):
    committed = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (REPO / "book" / "executed").rglob("*")
                 if p.is_file()}
    report = build_smoke_book(build=False)
    jobs = book.plan("smoke")
    assert len(report["executed"]) + len(report["skipped"]) == len(jobs) and not report["kept_stale"]
    manifest = json.loads((SMOKE_OUT / "book" / "executed" / "manifest.json").read_text())
    for job in jobs:
        nb = nbformat.read(SMOKE_OUT / job["output"], as_version=4)
        assert book.output_problems(nb) == [], job["output"]
        assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code"), job["output"]
        outputs = [o for c in nb.cells for o in c.get("outputs", [])]
        assert any("text/html" in o.get("data", {}) for o in outputs), job["output"]
        entry = manifest[job["output"]]
        assert set(entry["inputs"]) == {"notebook", "parameters", "library", "reads"}
        assert {"hpstrat_lite", "hpstrat_lite.core.folds"} <= set(entry["modules"]), entry["modules"]
        if Path(job["notebook"]).stem in ("03_gnn_experiments", "03d_controls", "04_appendix_b"):  # smoke: a tiny sweep
            assert "hpstrat_lite.engine.train" in entry["modules"] and "recomputed" in _stdout(nb), job["output"]
        elif Path(job["notebook"]).stem == "10_audit_your_graph":  # audits a graph: trains its models
            assert "hpstrat_lite.auditing" in entry["modules"] and "hpstrat_lite.engine.user_models" in entry["modules"]
        elif not job["name"].startswith(PART2_PREFIXES) and job["name"] != "scorecard":  # it reads Part II
            assert "hpstrat_lite.engine.train" not in entry["modules"]  # the fold chapters train nothing
    assert committed == {p: hashlib.sha256(p.read_bytes()).hexdigest()
                         for p in (REPO / "book" / "executed").rglob("*") if p.is_file()}, \
        "the smoke profile must not touch the committed executed notebooks"
    # A second call with unchanged inputs executes nothing.
    again = build_smoke_book(build=False)
    assert again["executed"] == [] and len(again["skipped"]) == len(jobs)


def test_every_notebook_cell_has_an_id():
    # nbformat 4.5 cell ids: a cell added without one makes nbformat warn on every read (a future error)
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        missing = [i for i, c in enumerate(cells) if "id" not in c]
        assert not missing, f"{path.name}: cells {missing} have no id"


def test_executed_differences_compare_shown_outputs_not_volatile_parts(tmp_path):
    """Two executions with the same numbers compare equal (Styler ids, code versions masked); a changed
    number or a missing notebook is reported."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def write(root, name, html, text):
        cell = new_code_cell("x", outputs=[new_output("display_data", data={"text/html": html}),
                                           new_output("stream", name="stdout", text=text)])
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(new_notebook(cells=[cell]), root / name)

    old, new = tmp_path / "old", tmp_path / "new"
    write(old, "a.ipynb", '<table id="T_1a2b3"><td>0.91</td></table>', "engine 0.1.0+abc1234.dirty\n")
    write(new, "a.ipynb", '<table id="T_9f8e7"><td>0.91</td></table>', "engine 0.1.0+0123456\n")
    write(old, "b.ipynb", "<td>1.83</td>", "")
    write(new, "b.ipynb", "<td>1.85</td>", "")
    write(old, "c.ipynb", "<td>1</td>", "")
    assert book.executed_differences(old, new) == {"b.ipynb": 1, "c.ipynb": -1}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["03_gnn_experiments", "04_appendix_b"])
def test_result_chapters_run_from_the_notebooks_folder(name, tmp_path, data_root):
    """JupyterLab starts kernels in notebooks/: the chapters read the committed results from there too."""
    import papermill as pm

    pm.execute_notebook(str(REPO / "notebooks" / f"{name}.ipynb"), str(tmp_path / "out.ipynb"),
                        cwd=str(REPO / "notebooks"), progress_bar=False, kernel_name="python3")
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.parametrize("name", ["06_mlp_vs_gnn", "08_synthetic_ws", "09_link_benchmarks", "scorecard"])
def test_executed_part2_pages_show_no_nan_cell(name):
    """The book's Part II pages and the scorecard: a missing number reads ``n/a``, never ``NaN``."""
    import re

    pages = sorted((REPO / "book" / "executed").glob(f"{name}*.ipynb"))
    assert pages, f"no executed page for {name}"
    for page in pages:
        for cell in json.loads(page.read_text())["cells"]:
            for out in cell.get("outputs", []):
                shown = "".join(out.get("data", {}).get("text/html", ""))
                cells = re.findall(r"<td[^>]*>(.*?)</td>", shown, re.S)
                assert not [c for c in cells if c.strip().lower() == "nan"], f"{page.name}: a table cell reads NaN"
