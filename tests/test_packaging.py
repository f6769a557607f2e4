"""The project's files agree with each other: environment.yml vs pyproject.toml, the fixed layout."""
import re
import tomllib

from conftest import REPO


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_top_level_layout():
    for path in ["book", "notebooks", "hpstrat_lite", "tests", "results", "environment.yml", "_config.yml",
                 "_toc.yml", "README.md", "pyproject.toml", "Makefile", ".ci/run"]:
        assert (REPO / path).exists(), path


def test_readme_is_a_short_user_document():
    """What it is, the two commands, papermill, the five lines, the CLI, data, results, citation: no diary."""
    text = (REPO / "README.md").read_text()
    assert len(text) <= 10_000
    for needed in ("make test", "make book", "papermill notebooks/", "from hpstrat_lite import", "hpstrat experiment",
                   "HPSTRAT_DATA", "results/README.md", "benchmarks/README.md", "## Cite"):
        assert needed in text, needed
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dates belong in benchmarks/README.md"
    assert not re.search(r"\bsession|\bcommit [0-9a-f]{7}", text, flags=re.I)


def test_readme_five_lines_run(data_root):
    block = (REPO / "README.md").read_text().split("## The library in five lines")[1].split("```python")[1]
    code = block.split("```")[0]
    exec(compile(code, "README.md", "exec"), {})


def test_documents_describe_the_software_not_its_making():
    """No page, docstring or document speaks of sessions, stops or machine loans."""
    paths = [REPO / "README.md", REPO / "results" / "README.md", REPO / "benchmarks" / "README.md",
             *(REPO / "book").glob("*.md"), *(REPO / "notebooks").glob("*.ipynb"), *(REPO / "hpstrat_lite").rglob("*.py"),
             *(REPO / "benchmarks").glob("*.py"), *(REPO / "tools").glob("*.py")]
    pattern = re.compile(r"\bsessions?\b|\bstop \d+\b|\bloans?\b|\blent\b|\bthe issue\b|\bissue \d+", flags=re.I)
    hits = [f"{p.relative_to(REPO)}: {m.group(0)!r}" for p in paths for m in pattern.finditer(p.read_text())]
    assert hits == []
