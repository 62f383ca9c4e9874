"""``judge-bench --shadow-audit``: the audit off and at rate 1.0, side by side, against the fake judge."""

from eval import bench_shadow_audit
from eval.bench_shadow_audit import audit_rows, section, shadow_audit_cost


def test_half_the_rows_are_the_rules_and_every_one_is_audited_at_rate_one(monkeypatch):
    monkeypatch.setattr(bench_shadow_audit, "LATENCY_CALLS", 6)
    off, on = shadow_audit_cost(20, 1)
    assert (off[0]["rule_rows"], off[0]["judge_rows"]) == (10, 10)
    assert (on[0]["rule_rows"], on[0]["judge_rows"]) == (10, 10)
    assert off[0]["sampled"] == 0
    # every rule-decided reward: the warm-up's 4, the batch's 10, the 6 sync calls
    assert on[0]["sampled"] == on[0]["judged"] == 20
    assert on[0]["over_budget"] == on[0]["failed"] == 0
    text = section(off, on, 20, "judge-bench --shadow-audit", "x86_64, 2 CPU cores, no GPU")
    assert text.startswith(bench_shadow_audit.START) and text.endswith(bench_shadow_audit.END)
    assert "20 judged in the background, 0 dropped over the budget or past the backlog" in text


def test_rows_alternate_rule_and_judge():
    rows = audit_rows(4)
    assert rows[0]["completion"].endswith("The answer is 0.")
    assert rows[2]["completion"].endswith("The answer is 3.")  # proved wrong: the reference is 2
    assert rows[1]["completion"].startswith("Maybe")
