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
    assert config.max_batch_size == 16 and config.batch_timeout == 0.05
    assert config.api_key is None and config.model is None


def test_env_interpolation_and_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_URL", "http://judge:9000")
    path = tmp_path / "r.yaml"
    path.write_text("judge_url: ${MY_URL}\ntimeout: ${MY_TIMEOUT:-12.5}\n")
    config = load_reward_config(path)
    assert config.judge_url == "http://judge:9000" and config.timeout == 12.5


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
    nested = RewardConfig.from_any({"reward": {"type": "judge_model", "config": {"timeout": 5}}})
    flat = RewardConfig.from_any({"timeout": 5})
    assert nested == flat


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_batch_sise": 4}, "unknown key 'max_batch_sise'; allowed keys: judge_url"),
        ({"max_batch_size": 0}, "max_batch_size: Input should be greater than or equal to 1"),
        ({"timeout": -1}, "timeout: Input should be greater than 0"),
        ({"mode": "slow"}, "mode: Input should be 'verdict' or 'fast'"),
        ({"judge_url": "localhost:8888"}, "judge_url: Value error, must start with http://"),
        ({"reward": {"type": "rule", "config": {}}}, "reward.type is 'rule'"),
    ],
)
def test_bad_values_name_the_key_and_the_allowed_range(data, message):
    with pytest.raises(JudgeConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RewardConfig.from_any(data)


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
