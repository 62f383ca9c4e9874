"""The wheel: bundled configs, judge profiles and py.typed inside; a client-only install works.

The client-only install is what a trainer gets from ``pip install judge-vllm``: no vLLM, no torch,
no FastAPI. It imports the public API, prints its version and configs, and a command needing an
extra says which extra in one line.
"""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
XVERIFY_PROMPT = "judge_prompts/profiles/xverify/user.j2"
VERSION = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from the tracked files alone (a checkout's stale build/ or egg-info would
    otherwise carry files the package excludes)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], check=True, capture_output=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-w", str(out), "-q"],
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
    narrower = {XVERIFY_PROMPT}  # CC BY-NC-ND: never in the wheel
    assert profiles and profiles - narrower <= names and not narrower & names
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
    xverify = "from judge_vllm.profiles import load_profile; load_profile('xverify')"
    missing = run(str(python), "-c", xverify)
    assert missing.returncode == 1 and "CC BY-NC-ND" in missing.stderr and "JUDGE_VLLM_XVERIFY_DIR" in missing.stderr
    supplied = tmp_path / "xverify-prompt"
    supplied.mkdir()
    (supplied / "user.j2").write_text((REPO / XVERIFY_PROMPT).read_text())
    found = subprocess.run([str(python), "-c", xverify + "; print('loaded')"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=300, env={"JUDGE_VLLM_XVERIFY_DIR": str(supplied), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert found.stdout.strip() == "loaded", found.stderr
