"""The wheel: bundled configs, judge profiles and py.typed inside; a client-only install works.

The client-only install is what a trainer gets from ``pip install judge-vllm``: no vLLM, no torch,
no FastAPI. It imports the public API, prints its version and configs, a command needing an
extra says which extra in one line, and it scores: every shipped profile, and ``judge-eval``, against
the fake judge run from the wheel.
"""

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from judge_vllm.testing.ports import free_port

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


def _requirements(wheel: Path, extra: str | None = None) -> list[str]:
    """The wheel's own requirements: its base dependencies, or those of one extra."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    found = []
    for line in lines:
        if line.startswith("Requires-Dist: "):
            requirement, _, marker = line.removeprefix("Requires-Dist: ").partition(";")
            if (f'extra == "{extra}"' in marker) if extra else "extra ==" not in marker:
                found.append(requirement.strip())
    return found


# Run in the client-only install: one reward with each bundled profile against the fake judge.
EVERY_PROFILE = """
import json, sys
from adapter import JudgeRewardSystem
from judge_vllm.errors import JudgeConfigError
from judge_vllm.profiles import builtin_profile_names

row = {"prompt": "What is 2+2?", "completion": "The answer is 4.", "answer": "4"}
rubric = {"criteria": "Is it right?", **{f"score{i}_description": f"level {i}" for i in range(1, 6)}}
scored = {}
for name in builtin_profile_names():
    config = {"judge_url": sys.argv[1], "use_cache": False, "fallback_to_rule": False, "startup_check": "off"}
    try:
        if name in ("pairwise", "listwise"):  # they compare a group's completions
            with JudgeRewardSystem({**config, "group": {"mode": name}}) as rs:
                reward = rs.reward_group([row, {**row, "completion": "It is 5."}, {**row, "completion": "4."}])[0]
        elif name == "criterion":  # a rubric's criteria
            with JudgeRewardSystem(config) as rs:
                reward = rs.reward(row["prompt"], row["completion"], rubric=["States the answer 4"])
        else:
            with JudgeRewardSystem({**config, "profile": name, "score_rubric": rubric if name == "prometheus" else None}) as rs:
                reward = rs.reward(**row)
        scored[name] = [reward["source"], reward.get("reason")]
    except JudgeConfigError as err:
        scored[name] = ["JudgeConfigError", str(err)]
print(json.dumps(scored))
"""
# Profiles whose verdict format the fake judge does not write (it answers chat requests with a
# label or a JSON score, completions with "Final Decision: Yes"): their prompt was rendered, sent
# and its reply read, which is what an install can break.
NOT_WRITTEN_BY_THE_FAKE = {
    "compassverifier-cot": "Invalid judge output",
    "prometheus": "Invalid judge output",
    "listwise": "Judge unavailable",  # a member none of whose comparisons could be read
}


@pytest.mark.slow
def test_a_client_only_install_imports_reports_its_version_and_names_missing_extras(wheel, tmp_path):
    venv = tmp_path / "client"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, script = venv / "bin" / "python", venv / "bin" / "judge-vllm"

    def pip_install(*what: str) -> None:
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", *what], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]

    # The wheel and its base dependencies alone: no extra comes in through a resolver.
    pip_install("--no-deps", str(wheel))
    pip_install(*_requirements(wheel))

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

    port = free_port()
    plan = json.dumps({"max_model_len": 65_536})  # compassverifier-cot's prompt with its 4,096-token budget
    fake = subprocess.Popen([str(python), "-m", "judge_vllm.testing.fake_server", "--port", str(port), "--plan", plan],
                            stdout=subprocess.PIPE, text=True, cwd=tmp_path)  # fmt: skip
    try:
        assert fake.stdout is not None and fake.stdout.readline().startswith("fake judge at")
        url = f"http://127.0.0.1:{port}"
        scored = run(str(python), "-c", EVERY_PROFILE, url)
        assert scored.returncode == 0, scored.stderr
        outcomes = json.loads(scored.stdout)
        assert sorted(outcomes) == sorted(p.name for p in (REPO / "judge_prompts" / "profiles").iterdir())
        source, why = outcomes.pop("xverify")  # its prompt is not shipped: needed by it alone
        assert source == "JudgeConfigError" and "JUDGE_VLLM_XVERIFY_DIR" in why
        for name, (source, reason) in outcomes.items():
            unread = NOT_WRITTEN_BY_THE_FAKE.get(name)
            assert (source, reason) == ("error", unread) if unread else source == "judge", (name, source, reason)

        # judge-eval with a config naming the judge (its extra: numpy, scipy, matplotlib; parquet
        # and datasets folders are not read here).
        pip_install(*(r for r in _requirements(wheel, "eval") if not r.startswith(("pyarrow", "datasets"))))
        (tmp_path / "my.yaml").write_text(f"judge_url: {url}\nuse_cache: false\n")  # nothing in ~/.cache
        data = tmp_path / "rows.jsonl"
        rows = [{"prompt": "What is 2+2?", "completion": c, "answer": "4", "label": int(c.endswith("4."))}
                for c in ("It is 4.", "It is 5.", "So 4.", "So 3.")]  # fmt: skip
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        judge_eval = venv / "bin" / "judge-eval"
        evaluated = run(str(judge_eval), "--data", str(data), "--config", "my.yaml", "--out", "out", "--no-progress")
        assert evaluated.returncode == 0, evaluated.stderr[-3000:]
        scores = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
        assert len(scores) == len(rows) and all(s["judge_source"] == "judge" for s in scores), scores
    finally:
        fake.terminate()
        fake.wait(10)
