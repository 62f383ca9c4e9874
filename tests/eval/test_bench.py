"""The benchmark in a tiny configuration, against the real judge, so it cannot rot (no timing asserted)."""

import pytest

from eval.bench import main, mixed_items

pytestmark = pytest.mark.e2e


def test_benchmark_smoke(judge_url, tmp_path):
    out = tmp_path / "BENCHMARKS.md"
    args = ["--url", judge_url, "--items", "4", "--naive-items", "1", "--repeats", "1", "--group", "2", "--overhead-items", "300",
            "--memory-requests", "1000", "--skip-offline", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    report = out.read_text()
    for section in ("## (a)", "## (c)", "## (d)", "## (e)"):
        assert section in report
    assert "| verdict |" in report and "| fast |" in report
    assert "| fast, GRPO groups of 2 |" in report


def test_mixed_items_cover_every_answer_type():
    types = {item["answer_type"] for item in mixed_items(8)}
    assert types == {"NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT"}


def test_grpo_items_share_the_question_and_differ_in_the_completion():
    group = mixed_items(8, group=4)[:4]
    assert len({(i["prompt"], i["answer"], i["answer_type"]) for i in group}) == 1
    assert len({i["completion"] for i in group}) == 4
    assert group[0]["completion"] == mixed_items(1)[0]["completion"]  # the first is the right one


def test_the_group_cost_section_shows_each_row_and_estimates_the_gpu_from_uncached_tokens():
    from eval.bench_groups import END, GPU_DECODE_TOKENS_S, GPU_PREFILL_TOKENS_S, START, GroupCost, section

    cost = GroupCost(size=8, mode="pairwise, all_pairs", judgments=56, judged=8, seconds=42.2,
                     prompt_tokens=20_000, generated_tokens=56, prefix_hit_rate=0.75)  # fmt: skip
    assert cost.gpu_seconds == pytest.approx(5_000 / GPU_PREFILL_TOKENS_S + 56 / GPU_DECODE_TOKENS_S)
    text = section([cost], "judge", "machine")
    assert text.startswith(START) and text.endswith(END)
    assert "| 8 | pairwise, all_pairs | 56 | 8/8 | 42.2 | 20,000 | 56 | 75% |" in text
