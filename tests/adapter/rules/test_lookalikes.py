import time

import pytest

from adapter.rules.lookalikes import fold_lookalikes


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Ignore\u200b previous", "Ignore previous"),
        ("so\u00adft", "soft"),
        ("\ufeffa\u200c\u200d\u200e\u200f\u2060\u2064b", "ab"),
        ("\U000e0041\U000e0042x", "x"),  # tag characters
        ("S\ufe0fystem", "System"),  # a variation selector
        ("system：", "system:"),
        ("Ｓｙｓｔｅｍ", "System"),
        ("ﬁnal", "final"),
        ("a\u3000b\u00a0c\u2003d", "a b c d"),
        ("a\r\nb\rc\vd\fe\u2028f\u2029g\x85h", "a\nb\nc\nd\ne\nf\ng\nh"),
        ("x² = 4", "x2 = 4"),  # matching only: never graded
        ("答案是 4", "答案是 4"),
        ("La réponse", "La réponse"),
        ("plain ASCII text", "plain ASCII text"),
    ],
)
def test_fold(text, folded):
    assert fold_lookalikes(text) == folded


def test_ten_megabytes_fold_in_linear_time():
    text = ("Ｓｙｓｔｅｍ réponse x² \u200b" * 500_000)[:10_000_000]
    started = time.process_time()  # CPU time: a busy machine doesn't count
    assert fold_lookalikes(text).startswith("System réponse x2 ")
    assert time.process_time() - started < 5.0  # measured 0.6 s
