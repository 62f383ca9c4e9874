"""The wheel: bundled configs, judge profiles and py.typed inside; a client-only install works.

The client-only install is what a trainer gets from ``pip install judge-vllm``: no vLLM, no torch,
no FastAPI. It imports the public API, prints its version and configs, and a command needing an
extra says which extra in one line.
"""

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VERSION = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-w", str(out), "-q"],
        check=True, capture_output=True,
    )  # fmt: skip
    (built,) = out.glob("judge_vllm-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_configs_profiles_and_py_typed(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    configs = {p.name for p in (REPO / "configs").glob("*.yaml")}
    packaged = {n.rsplit("/", 1)[1] for n in names if "/share/judge-vllm/configs/" in n}
    assert configs and packaged == configs
    for package in ("adapter", "judge_vllm", "judge_prompts", "eval"):
        assert f"{package}/py.typed" in names
    profiles = {p.relative_to(REPO).as_posix() for p in (REPO / "judge_prompts" / "profiles").rglob("*")
                if p.suffix in {".j2", ".yaml"}}  # fmt: skip
    assert profiles and profiles <= names
    assert "eval/data/sample.jsonl" in names


@pytest.mark.slow
def test_a_client_only_install_imports_reports_its_version_and_names_missing_extras(wheel, tmp_path):
    venv = tmp_path / "client"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, script = venv / "bin" / "python", venv / "bin" / "judge-vllm"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), capture_output=True, text=True, cwd=tmp_path, timeout=300)

    absent = run(str(python), "-c", "import importlib.util as u; print([m for m in ('vllm', 'torch', 'fastapi') if u.find_spec(m)])")
    assert absent.stdout.strip() == "[]"  # the trainer side stays light
    imported = run(str(python), "-c", "from adapter import JudgeRewardSystem, create_judge_reward, BaseJudgeReward; print('ok')")
    assert imported.stdout.strip() == "ok", imported.stderr
    assert run(str(script), "--version").stdout.strip() == f"judge-vllm {VERSION}"
    shown = run(str(script), "config", "show", "reward")
    assert shown.returncode == 0 and shown.stdout == (REPO / "configs" / "reward.yaml").read_text()
    api = run(str(script), "api")
    assert api.returncode == 2 and api.stderr.strip().endswith("(pip install 'judge-vllm[api]')")
    assert "Traceback" not in api.stderr and len(api.stderr.strip().splitlines()) == 1
    judge_eval = run(str(venv / "bin" / "judge-eval"), "--help")
    assert judge_eval.returncode == 2 and "install judge-vllm[eval]" in judge_eval.stderr
    assert "Traceback" not in judge_eval.stderr
