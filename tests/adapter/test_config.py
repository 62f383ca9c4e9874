import re
from pathlib import Path

import pytest

from adapter.config import RewardConfig, interpolate_env, load_reward_config
from judge_vllm.errors import JudgeConfigError

REPO_CONFIG = "configs/reward.yaml"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in ("JUDGE_MODEL_URL", "JUDGE_MODEL_API_KEY", "JUDGE_MAX_BATCH_SIZE", "JUDGE_MAX_CONCURRENT"):
        monkeypatch.delenv(var, raising=False)


def test_the_seed_example_config_loads():
    config = load_reward_config(REPO_CONFIG)
    assert config.judge_url == "http://localhost:8888"
    assert config.max_batch_size == 16 and config.batch_wait == 0.05
    assert config.api_key is None and config.model is None


def test_env_interpolation_and_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_URL", "http://judge:9000")
    path = tmp_path / "r.yaml"
    path.write_text("judge_url: ${MY_URL}\nreward_timeout: ${MY_TIMEOUT:-12.5}\n")
    config = load_reward_config(path)
    assert config.judge_url == "http://judge:9000" and config.reward_timeout == 12.5


def test_env_overrides_win(monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL_URL", "http://other:1234")
    monkeypatch.setenv("JUDGE_MAX_BATCH_SIZE", "8")
    monkeypatch.setenv("JUDGE_MAX_CONCURRENT", "4")
    monkeypatch.setenv("JUDGE_MODEL_API_KEY", "sk-secret")
    config = load_reward_config(REPO_CONFIG)
    assert (config.judge_url, config.max_batch_size, config.max_concurrent_requests) == (
        "http://other:1234",
        8,
        4,
    )
    assert config.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(config)
    assert RewardConfig.from_any({}).judge_url == "http://other:1234"


def test_nested_and_flat_dicts():
    nested = RewardConfig.from_any({"reward": {"type": "judge_model", "config": {"reward_timeout": 5}}})
    flat = RewardConfig.from_any({"reward_timeout": 5})
    assert nested == flat


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_batch_sise": 4}, "unknown key 'max_batch_sise' (did you mean 'max_batch_size'?); every key: docs/config-reference.md"),
        ({"group": {"oponents": 3}}, "unknown key 'group.oponents' (did you mean 'opponents'?); allowed keys: mode, schedule, opponents,"),
        ({"rules": {"rel_tl": 1}}, "unknown key 'rules.rel_tl' (did you mean 'rel_tol'?); allowed keys: rel_tol, symbolic_timeout,"),
        ({"max_batch_size": 0}, "max_batch_size: Input should be greater than or equal to 1"),
        ({"reward_timeout": -1}, "reward_timeout: Input should be greater than 0"),
        ({"mode": "slow"}, "mode: Input should be 'verdict' or 'fast'"),
        ({"judge_url": "localhost:8888"}, "judge_url: Value error, must start with http://"),
        ({"reward": {"type": "rule", "config": {}}}, "reward.type is 'rule'"),
    ],
)
def test_bad_values_name_the_key_and_the_allowed_range(data, message):
    with pytest.raises(JudgeConfigError, match=re.escape(message)):
        RewardConfig.from_any(data)


@pytest.mark.parametrize("value", [-1, 0, "soon", 7200])
def test_a_bad_reward_timeout_is_reported_alone_not_for_the_judge_timeout_it_would_default(value):
    with pytest.raises(JudgeConfigError) as info:
        RewardConfig.from_any({"reward_timeout": value})
    assert "reward_timeout: " in str(info.value) and "judge_timeout" not in str(info.value)


@pytest.mark.parametrize("data", [{"group": {"oponents": 3}}, {"judge_ulr": "http://a:1"}, {"rules": {"x": 1}}])
def test_an_unknown_key_is_a_message_of_at_most_two_lines(data):
    with pytest.raises(JudgeConfigError) as info:
        RewardConfig.from_any(data)
    assert len(str(info.value)) <= 2 * 120 and "judge_url, " not in str(info.value)


def test_bad_api_key_value_is_not_echoed():
    with pytest.raises(JudgeConfigError) as info:
        RewardConfig.from_any({"api_key": ["sk-leak"]})
    assert "sk-leak" not in str(info.value)


@pytest.mark.parametrize(("text", "message"), [("a: [", "not valid YAML"), ("- 1\n- 2", "must be a mapping")])
def test_bad_yaml_is_a_config_error(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(JudgeConfigError, match=message):
        load_reward_config(path)


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(JudgeConfigError, match="cannot read"):
        load_reward_config(tmp_path / "nope.yaml")


def test_non_mapping_config_is_rejected():
    with pytest.raises(JudgeConfigError, match="must be a dict"):
        RewardConfig.from_any(42)


def test_interpolate_env_is_recursive():
    assert interpolate_env({"a": ["${X:-1}", {"b": "${Y}"}]}, {"Y": "2"}) == {"a": ["1", {"b": "2"}]}


def test_client_settings_are_declared_once_with_one_default():
    from judge_vllm.settings import JudgeClientConfig

    assert set(JudgeClientConfig.model_fields) <= set(RewardConfig.model_fields)
    assert RewardConfig().mode == JudgeClientConfig().mode
    given = {"mode": "verdict", "judge_timeout": 12.0, "request_timeout": 2.0, "max_retries": 1, "aspects": True,
             "max_explanation_chars": 64, "temperature": 0.5, "seed": 7, "use_batch_endpoint": False}  # fmt: skip
    client = RewardConfig(**given).client_config()
    assert {name: getattr(client, name) for name in given} == given


def test_dict_configs_get_env_interpolation(monkeypatch):
    monkeypatch.setenv("MY_JUDGE", "http://judge:9000")
    config = RewardConfig.from_any({"judge_url": "${MY_JUDGE}", "reward_timeout": "${MY_TIMEOUT:-7}"})
    assert config.judge_url == "http://judge:9000" and config.reward_timeout == 7.0
    nested = RewardConfig.from_any({"reward": {"type": "judge_model", "config": {"judge_url": "${MY_JUDGE}"}}})
    assert nested.judge_url == "http://judge:9000"


def test_an_unset_variable_without_default_names_the_key_and_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(JudgeConfigError, match=r"api_key: environment variable NOT_SET_ANYWHERE is not set"):
        RewardConfig.from_any({"api_key": "${NOT_SET_ANYWHERE}"})
    path = tmp_path / "r.yaml"
    path.write_text("reward:\n  type: judge_model\n  config:\n    judge_url: ${NOT_SET_ANYWHERE}\n")
    with pytest.raises(JudgeConfigError, match=r"reward\.config\.judge_url: environment variable NOT_SET"):
        load_reward_config(path)


def test_values_given_in_code_beat_env_overrides(monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL_URL", "http://from-env:1")
    monkeypatch.setenv("JUDGE_MAX_BATCH_SIZE", "8")
    config = RewardConfig.from_any({"judge_url": "http://given:2"})
    assert config.judge_url == "http://given:2" and config.max_batch_size == 8  # env fills what is not given


def test_the_seeds_multi_critique_example_reaches_each_url(monkeypatch, tmp_path):
    from adapter import create_judge_reward
    from judge_vllm.testing.fake_server import FakeJudgeServer

    with FakeJudgeServer() as one, FakeJudgeServer() as two:
        monkeypatch.setenv("JUDGE_MODEL_URL", "http://127.0.0.1:9")
        # No start-up check: each server counts the reward's call alone.
        judges = [create_judge_reward({"judge_url": url, "cache_dir": str(tmp_path / str(i)), "startup_check": "off"})
                  for i, url in enumerate((one.url, two.url))]  # fmt: skip
        try:
            results = [judge.compute_reward("q", "The answer is 4", "4", "NUMBER") for judge in judges]
        finally:
            for judge in judges:
                judge.close()
        assert [r.source for r in results] == ["judge", "judge"]
        assert one.counts["ok"] == 1 and two.counts["ok"] == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reward": {"type": "judge_model", "config": {}, "reward_timeout": 5}}, "unknown key.*'reward_timeout' beside"),
        ({"reward": {"config": {}}, "judge_url": "http://x:1"}, "unknown key.*'judge_url' beside 'reward'"),
        ({"judge_urls": ["ftp://x", "http://ok:1"]}, r"judge_urls: Value error, entry 0 \('ftp://x'\) must start with http"),
        ({"judge_urls": []}, "judge_urls: Value error, list at least one"),
        ({"judge_url": "http://"}, "judge_url: Value error, must start with http:// or https:// and name a host"),
    ],
)
def test_config_mistakes_are_not_accepted_silently(data, message):
    with pytest.raises(JudgeConfigError, match=message):
        RewardConfig.from_any(data)


@pytest.mark.parametrize("path", sorted(Path(__file__).parents[2].glob("configs/*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path, monkeypatch):
    for var in ("JUDGE_MODEL_URL", "JUDGE_MODEL_API_KEY", "JUDGE_MAX_BATCH_SIZE", "JUDGE_MAX_CONCURRENT"):
        monkeypatch.delenv(var, raising=False)
    config = RewardConfig.from_any(path)
    assert config.judge_profile().name == config.profile.rstrip("/").split("/")[-1]


SEED_CONFIG = """\
reward:
  type: judge_model
  config:
    judge_url: http://localhost:8888
    use_cache: true
    cache_size: 5000
    max_batch_size: 16
    batch_timeout: 0.05
    max_concurrent_requests: 32
    timeout: 30.0
    fallback_to_rule: true
    max_retries: 3
"""


def test_the_seed_guides_old_timeout_keys_still_load_with_a_warning_naming_the_new_ones(tmp_path):
    path = tmp_path / "seed.yaml"
    path.write_text(SEED_CONFIG)
    with pytest.warns(FutureWarning) as warned:
        old = load_reward_config(path)
    said = " ".join(str(w.message) for w in warned)
    assert "'timeout' is now 'reward_timeout'" in said and "'batch_timeout' is now 'batch_wait'" in said
    new = SEED_CONFIG.replace("batch_timeout:", "batch_wait:").replace("timeout: 30", "reward_timeout: 30")
    path.write_text(new)
    assert load_reward_config(path) == old and old.reward_timeout == 30.0 and old.batch_wait == 0.05


@pytest.mark.parametrize(
    ("old", "new", "read"),
    [
        ({"timeout": 12}, {"reward_timeout": 12}, lambda c: c.reward_timeout),
        ({"batch_timeout": 0.2}, {"batch_wait": 0.2}, lambda c: c.batch_wait),
        ({"circuit_breaker_timeout": 9}, {"circuit_breaker_cooldown": 9}, lambda c: c.circuit_breaker_cooldown),
        ({"rules": {"math_timeout_s": 1.5}}, {"rules": {"symbolic_timeout": 1.5}}, lambda c: c.rules.symbolic_timeout),
    ],
)
def test_each_renamed_key_is_its_new_name_with_a_future_warning(old, new, read):
    with pytest.warns(FutureWarning, match="is now"):
        renamed = RewardConfig.from_any(old)
    assert renamed == RewardConfig.from_any(new) and read(renamed) == read(RewardConfig.from_any(new))


def test_a_key_given_under_both_names_is_an_error():
    with pytest.raises(JudgeConfigError, match="give reward_timeout only"):
        RewardConfig.from_any({"timeout": 5, "reward_timeout": 6})


def test_the_judge_client_reads_timeout_as_judge_timeout():
    from judge_vllm.settings import JudgeClientConfig

    with pytest.warns(FutureWarning, match="'timeout' is now 'judge_timeout'"):
        assert JudgeClientConfig(timeout=7).judge_timeout == 7.0


def test_judge_timeout_defaults_to_the_reward_timeout_and_may_not_exceed_it():
    assert RewardConfig.from_any({"reward_timeout": 90}).judge_timeout == 90.0
    assert RewardConfig.from_any({"reward_timeout": 90, "judge_timeout": 20}).judge_timeout == 20.0
    with pytest.raises(JudgeConfigError, match=r"judge_timeout \(40.0 s.* must not exceed reward_timeout \(30.0 s"):
        RewardConfig.from_any({"judge_timeout": 40})


def test_a_bundled_config_name_is_a_config():
    from adapter.config import bundled_configs, load_reward_config

    assert RewardConfig.from_any("trl") == load_reward_config(bundled_configs()["trl"])
    with pytest.raises(JudgeConfigError, match=r"'trll' is neither a file nor a bundled config \(.*trl.*config list\)"):
        RewardConfig.from_any("trll")
