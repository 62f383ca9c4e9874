"""The API key never shows up in logs, errors, metrics, results or the cache."""

import json
import logging

import pytest
import yaml

from adapter import JudgeRewardSystem
from judge_vllm.schemas import Verdict
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

SECRET = "sk-SECRET-do-not-leak-0123456789"


def _everything_visible(rs, results, caplog, cache_dir) -> str:
    cache_bytes = b"".join(p.read_bytes() for p in cache_dir.rglob("*") if p.is_file())
    return "\n".join(
        [caplog.text, repr(results), repr(rs.get_metrics()), repr(rs.config), cache_bytes.decode("latin-1")]
    )


def test_key_is_used_but_never_leaked(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(FaultPlan(script=["error", "garbage"]), api_key=SECRET) as server:
        # No start-up check: the script is for the rewards.
        config = {"judge_url": server.url, "api_key": SECRET, "cache_dir": str(cache_dir), "max_retries": 0,
                  "startup_check": "off"}  # fmt: skip
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", f"The answer is {i}", str(i)) for i in range(4)]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert [r["source"] for r in results] == ["rule_fallback", "rule_fallback", "judge", "judge"]
    assert SECRET not in text


def test_wrong_key_error_does_not_echo_the_key(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(api_key="the-right-key") as server:
        config = {
            "judge_url": server.url,
            "api_key": SECRET,
            "cache_dir": str(cache_dir),
            "model": "fake-judge",
            "startup_check": "warn",  # its 401 is logged too, and must not hold the key either
        }
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", "The answer is 1", "1")]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert results[0]["reason"] == "Judge rejected the request" and "401" in results[0]["error"]
    assert SECRET not in text


def test_cache_directory_is_private(tmp_path, fake_judge):
    cache_dir = tmp_path / "cache"
    with JudgeRewardSystem({"judge_url": fake_judge.url, "cache_dir": str(cache_dir)}) as rs:
        rs.reward("q", "The answer is 1", "1")
    assert cache_dir.stat().st_mode & 0o777 == 0o700


# -- credentials in a judge URL, and the key on every surface ---------------------------------

PASSWORD = "pw-USERINFO-secret-42"


def _userinfo_url(server) -> str:
    return server.url.replace("http://", f"http://alice:{PASSWORD}@")


def test_credentials_in_the_judge_url_never_leave(tmp_path, caplog):
    with FakeJudgeServer(FaultPlan(script=["error"])) as server:
        # No start-up check: the script is for the rewards.
        config = {"judge_url": _userinfo_url(server), "cache_dir": str(tmp_path / "c"), "max_retries": 0,
                  "startup_check": "off"}  # fmt: skip
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", f"The answer is {i}", str(i)) for i in range(3)]
            text = _everything_visible(rs, results, caplog, tmp_path / "c")
    assert [r["source"] for r in results] == ["rule_fallback", "judge", "judge"]
    assert any(r.name.startswith("httpx") for r in caplog.records)  # httpx's own lines were captured
    assert PASSWORD not in text and "alice:" not in text


def test_a_dead_judge_with_credentials_errors_without_them(tmp_path, caplog):
    # The start-up check's warning is among what is checked.
    config = {"judge_url": f"http://bob:{PASSWORD}@127.0.0.1:9", "cache_dir": str(tmp_path / "c"), "max_retries": 0,
              "startup_check": "warn"}  # fmt: skip
    with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
        results = [rs.reward("q", "The answer is 1", "1")]
        text = _everything_visible(rs, results, caplog, tmp_path / "c")
    assert results[0]["source"] == "rule_fallback" and results[0]["error"]
    assert PASSWORD not in text


def test_replica_urls_in_metrics_and_prometheus_hide_credentials(tmp_path):
    from prometheus_client import CollectorRegistry, generate_latest

    from adapter.observability.prometheus_series import RewardCollector

    with FakeJudgeServer() as a, FakeJudgeServer() as b:
        config = {"judge_replicas": [_userinfo_url(a), _userinfo_url(b)], "cache_dir": str(tmp_path / "c")}
        with JudgeRewardSystem(config) as rs:
            rs.reward("q", "The answer is 1", "1")
            metrics = rs.get_metrics()
            registry = CollectorRegistry()
            registry.register(RewardCollector(lambda: metrics))
            exposition = generate_latest(registry).decode()
    assert len(metrics["replicas"]) == 2 and all("***@" in url for url in metrics["replicas"])
    assert PASSWORD not in repr(metrics) and PASSWORD not in exposition


@pytest.mark.parametrize("with_api_key", [False, True], ids=["no-api-key", "api-key"])
def test_health_shows_the_judge_url_without_credentials(tmp_path, with_api_key):
    import httpx

    from adapter.http import create_app
    from judge_vllm.testing.asgi_server import ApiServer

    with FakeJudgeServer() as judge:
        config = {"judge_url": _userinfo_url(judge), "cache_dir": str(tmp_path / "c"), "api_key": SECRET if with_api_key else None}
        with ApiServer(create_app(config)) as api:
            reply = httpx.get(f"{api.url}/health")
            metrics = httpx.get(f"{api.url}/metrics").text
    assert reply.status_code == 200 and reply.json()["upstream"]["url"].startswith("http://***@")
    for shown in (reply.text, metrics):
        assert PASSWORD not in shown and SECRET not in shown


def test_an_exception_text_never_holds_a_registered_secret():
    from judge_vllm.errors import JudgeUnavailableError
    from judge_vllm.redaction import register_secret

    register_secret(SECRET)
    err = JudgeUnavailableError(f"upstream said: bad key {SECRET} for http://carol:{PASSWORD}@judge:8888")
    assert SECRET not in str(err) and PASSWORD not in str(err) and "http://***@judge:8888" in str(err)


def test_a_key_split_by_the_judgment_log_cut_is_still_scrubbed(tmp_path):
    import json

    log = tmp_path / "judgments.jsonl"
    config = {"cache_dir": str(tmp_path / "c"), "api_key": SECRET, "model": "m", "startup_check": "off",
              "judgment_log_path": str(log), "judgment_log_max_chars": 64}  # fmt: skip
    # The key straddles the cut: its head ends the kept head, its tail starts the kept tail.
    completion = "x" * 22 + SECRET + "y" * 200 + SECRET + "z" * 22

    class _Judge(JudgeRewardSystem):
        def _request_judge(self, request):
            return Verdict(score=1.0, explanation="ok")

    with _Judge(config) as rs:
        rs.reward("q", completion, "1")
    line = log.read_text()
    logged = json.loads(line)["completion"]
    assert "chars cut" in logged and SECRET[:8] not in line and SECRET[-8:] not in line


def test_the_second_judges_key_and_url_credentials_never_leave(tmp_path, caplog):
    """``escalate_to`` given as a mapping holds a plain-string key and a URL with credentials:
    neither shows in the config's repr or str, a reward, the metrics or the logs."""
    import logging

    from adapter import create_judge_reward
    from adapter.config import RewardConfig

    key, password = "sk-second-judge-7712", "pw-second-8841"
    second = {"judge_url": f"http://bob:{password}@127.0.0.1:9", "api_key": key, "reward_timeout": 2}
    # The start-up check's warning is among what is seen.
    config = {"judge_url": "http://127.0.0.1:9", "cache_dir": str(tmp_path / "c"), "reward_timeout": 3,
              "escalate_to": second, "startup_check": "warn"}  # fmt: skip
    caplog.set_level(logging.DEBUG)
    loaded = RewardConfig.from_any(config)
    seen = repr(loaded) + str(loaded)
    with create_judge_reward(config) as rs:
        seen += str(rs.reward("Q?", "The answer is 42", "42")) + str(rs.get_metrics())
    seen += caplog.text
    assert key not in seen and password not in seen and "escalate_to" in seen


@pytest.mark.parametrize("tail", ["\n", "\t", "\r", "\r\n"], ids=["newline", "tab", "cr", "crlf"])
def test_a_key_with_trailing_whitespace_is_stripped_and_works_without_showing(tmp_path, caplog, tail):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(api_key=SECRET) as server:
        config = {"judge_url": server.url, "api_key": SECRET + tail, "cache_dir": str(cache_dir), "max_retries": 0}
        with caplog.at_level(logging.WARNING), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", "The answer is 1", "1")]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert (results[0]["source"], results[0]["error"]) == ("judge", None)
    assert rs.config.api_key is not None and rs.config.api_key.get_secret_value() == SECRET
    assert SECRET[:12] not in text


def test_a_key_from_the_environment_is_stripped(monkeypatch):
    from adapter.config import RewardConfig

    monkeypatch.setenv("JUDGE_MODEL_API_KEY", f"  {SECRET}\r\n")
    config = RewardConfig.from_any({})
    assert config.api_key is not None and config.api_key.get_secret_value() == SECRET


@pytest.mark.parametrize("inside", ["\x00", "\n", "\x1b"], ids=["nul", "newline", "escape"])
def test_a_key_with_a_control_character_inside_is_refused_without_showing_it(inside):
    from adapter.config import RewardConfig
    from judge_vllm.errors import JudgeConfigError

    key = f"sk-inner{inside}control-0123456789"
    with pytest.raises(JudgeConfigError, match="api_key holds a control or non-printable character") as caught:
        RewardConfig.from_any({"api_key": key})
    assert "sk-inner" not in str(caught.value)


@pytest.mark.parametrize("key", ["sk-café-0123456789", "sk-ключ-0123456789", "ｓｋ-fullwidth-0123456789"])
def test_a_key_that_is_not_ascii_is_refused_without_showing_it(key):
    """Such a key was accepted, then every reward fell back with reason "Invalid input" (the
    header cannot carry it); now the config refuses it, naming the field, whichever way it is built."""
    from pydantic import ValidationError

    from adapter.config import RewardConfig
    from judge_vllm.errors import JudgeConfigError
    from judge_vllm.settings import JudgeClientConfig

    with pytest.raises(JudgeConfigError, match="api_key holds a character that is not ASCII") as caught:
        RewardConfig.from_any({"api_key": key})
    with pytest.raises(ValidationError, match="api_key holds a character that is not ASCII") as direct:
        JudgeClientConfig(api_key=key)
    for shown in (str(caught.value), str(direct.value)):
        assert key[:6] not in shown and key[-10:] not in shown


@pytest.mark.parametrize("many", ["judge_replicas", "judge_urls"])
def test_config_dumps_show_no_credentials_and_the_config_keeps_them(many):
    """``model_dump`` (python and JSON mode) and ``model_dump_json`` show every URL without its
    credentials and no key, a second judge's mapping's too, as the repr does; trainers log these
    dicts to experiment trackers. The config itself keeps them, and so does a copy made with a
    command line's ``--judge-url``."""
    from adapter.config import RewardConfig, with_judge_url

    key, second_key, second_password = "sk-dumped-key-4471", "sk-dumped-second-9902", "pw-dumped-second-3318"
    first = f"http://alice:{PASSWORD}@127.0.0.1:9"
    second = {"judge_url": f"http://bob:{second_password}@127.0.0.1:9", "api_key": second_key,
              "judge_replicas": [f"http://bob:{second_password}@127.0.0.1:8"]}  # fmt: skip
    config = RewardConfig.from_any({"judge_url": first, "api_key": key, many: [first], "escalate_to": second})
    dumps = {
        "model_dump": repr(config.model_dump()),
        "model_dump(json)": repr(config.model_dump(mode="json")),
        "model_dump_json": config.model_dump_json(),
        "repr": repr(config),
        "str": str(config),
    }
    for name, shown in dumps.items():
        assert [s for s in (PASSWORD, key, second_key, second_password) if s in shown] == [], name
        assert shown.count("http://***@127.0.0.1:") == 4, name
    assert config.judge_url == first and getattr(config, many) == [first]
    assert config.api_key is not None and config.api_key.get_secret_value() == key
    assert config.escalate_to == second
    moved = with_judge_url(config, f"http://carol:{PASSWORD}@127.0.0.1:7")
    assert moved.judge_url == f"http://carol:{PASSWORD}@127.0.0.1:7" and moved.escalate_to == second
    assert moved.api_key is not None and moved.api_key.get_secret_value() == key


@pytest.fixture
def fresh_process_logging(monkeypatch):
    """Log records as in a process that has registered no secret yet (no scrubbing factory)."""
    from judge_vllm import redaction

    previous = logging.getLogRecordFactory()
    monkeypatch.setattr(redaction, "_installed", False)
    logging.setLogRecordFactory(logging.LogRecord)
    yield
    logging.setLogRecordFactory(previous)


def test_credentials_too_short_to_register_still_never_reach_a_log(tmp_path, caplog, fresh_process_logging):
    """``http://u:pw@host``: neither part is long enough to be a secret worth a pattern, and httpx
    logs every request's URL with its userinfo; the URL alone turns log scrubbing on."""
    with FakeJudgeServer() as server:
        config = {"judge_url": server.url.replace("http://", "http://u:pw@"), "cache_dir": str(tmp_path)}
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            assert rs.reward("q", "The answer is 1", "2")["source"] == "judge"
    httpx_lines = [r.getMessage() for r in caplog.records if r.name.startswith("httpx")]
    assert any("http://***@127.0.0.1" in line for line in httpx_lines)
    assert "u:pw@" not in caplog.text


# -- one run, credentials given every way, every output read --------------------------------

FIRST_USER, FIRST_PASSWORD = "alice-first-judge", "pw-from-env-first-5521"  # password: ${JUDGE_PASSWORD}
REPLICA_USER, REPLICA_PASSWORD = "bob-replica-judge", "pw-literal-replica-7734"  # written in the YAML
SECOND_USER, SECOND_PASSWORD = "carol-second-judge", "pw-from-env-second-3318"  # ${SECOND_PASSWORD}
ENV_KEY, SECOND_KEY = "sk-from-env-key-6620-abcdef", "sk-literal-second-key-8834"  # ${JUDGE_KEY}; literal
EVERY_SECRET = (FIRST_USER, FIRST_PASSWORD, REPLICA_USER, REPLICA_PASSWORD, SECOND_USER, SECOND_PASSWORD,
                ENV_KEY, SECOND_KEY)  # fmt: skip


def _files_text(folder) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in sorted(folder.rglob("*")) if p.is_file())


def test_no_credential_leaves_a_judge_eval_run_or_a_reward_system(tmp_path, monkeypatch, capsys, caplog):
    """Credentials in URL userinfo (judge_replicas, judge_url, a second judge's), API keys, each
    literal or from ``${VAR}`` in the YAML: every judge is reached with its own (each server asks
    for them), and no output shows any: judge-eval's files, stdout and stderr, the logs at DEBUG,
    the judgment log, the cache, the config's dumps, results and ``get_metrics()``."""
    from adapter import create_judge_reward
    from adapter.config import RewardConfig
    from eval.cli import main as judge_eval

    monkeypatch.setenv("JUDGE_PASSWORD", FIRST_PASSWORD)
    monkeypatch.setenv("SECOND_PASSWORD", SECOND_PASSWORD)
    monkeypatch.setenv("JUDGE_KEY", ENV_KEY)
    # 24 prompts: both replicas get some, whatever their ports (routing hashes the prompt and the URL).
    rows = [{"prompt": f"What is {i} + 1?", "completion": f"It is {i + 1}", "answer": str(i + 1), "label": 1}
            for i in range(24)]  # fmt: skip
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with (
        FakeJudgeServer(basic_auth=f"{FIRST_USER}:{FIRST_PASSWORD}") as first,
        FakeJudgeServer(basic_auth=f"{REPLICA_USER}:{REPLICA_PASSWORD}") as replica,
        FakeJudgeServer(basic_auth=f"{SECOND_USER}:{SECOND_PASSWORD}") as second,
    ):
        first_url = first.url.replace("http://", f"http://{FIRST_USER}:${{JUDGE_PASSWORD}}@")
        config_file = tmp_path / "reward.yaml"
        config_file.write_text(yaml.safe_dump({
            "judge_url": first_url,
            "judge_replicas": [first_url, replica.url.replace("http://", f"http://{REPLICA_USER}:{REPLICA_PASSWORD}@")],
            "api_key": "${JUDGE_KEY}",
            "escalate_to": {"judge_url": second.url.replace("http://", f"http://{SECOND_USER}:${{SECOND_PASSWORD}}@"),
                            "api_key": SECOND_KEY},
            "escalation_band": [0.0, 1.0],  # every judged reward goes to the second judge too
            "cache_dir": str(tmp_path / "cache"), "max_retries": 0,
            "judgment_log_path": str(tmp_path / "log" / "judgments.jsonl"),
        }))  # fmt: skip
        with caplog.at_level(logging.DEBUG):
            code = judge_eval(["--data", str(tmp_path / "rows.jsonl"), "--config", str(config_file),
                               "--out", str(tmp_path / "out"), "--no-progress"])  # fmt: skip
            config = RewardConfig.from_any(config_file)
            with create_judge_reward(config_file) as rs:
                results = [rs.reward(f"What is {i} - 1?", f"It is {i - 1}", str(i - 1)) for i in range(3)]
                metrics = rs.get_metrics()
                shown_by_system = repr(rs.config) + str(rs.config.model_dump())
    printed = capsys.readouterr()
    assert code == 0
    assert {r["source"] for r in results} == {"judge"}  # each judge let in by its own credentials
    assert first.counts["ok"] and replica.counts["ok"] and second.counts["ok"]
    assert (tmp_path / "log" / "judgments.jsonl").stat().st_size > 0
    assert any(r.name.startswith("httpx") for r in caplog.records)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "at http://***@127.0.0.1:" in report
    dumps = [repr(config), str(config), str(config.model_dump()), str(config.model_dump(mode="json"))]
    dumps += [config.model_dump_json(), shown_by_system]
    outputs = {
        "judge-eval files": _files_text(tmp_path / "out"),
        "stdout": printed.out,
        "stderr": printed.err,
        "logs": caplog.text,
        "judgment log": _files_text(tmp_path / "log"),
        "cache": _files_text(tmp_path / "cache"),
        "config dumps": "\n".join(dumps),
        "results": repr(results),
        "get_metrics()": repr(metrics),
    }
    leaks = {name: [s for s in EVERY_SECRET if s in text] for name, text in outputs.items()}
    assert leaks == {name: [] for name in outputs}
