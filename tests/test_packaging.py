"""The project's files agree with each other: environment.yml vs pyproject.toml, the fixed layout."""
import re
import tomllib

from conftest import REPO


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    import yaml

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted |= set(extra)
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_deps = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {d for d in pip_deps if not d.startswith("-e")}
    assert {_name(d): d.replace(" ", "") for d in listed} == {_name(d): d.replace(" ", "") for d in wanted}


def test_top_level_layout():
    for path in ["book", "notebooks", "hpstrat_lite", "tests", "results", "environment.yml", "_config.yml",
                 "_toc.yml", "README.md", "pyproject.toml", "Makefile", ".ci/run"]:
        assert (REPO / path).exists(), path


def test_torch_is_pinned_to_the_cpu_wheel_on_disk():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "torch==2.13.0" in deps  # an unpinned torch pulls a multi-GB CUDA build
