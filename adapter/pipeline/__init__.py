"""The steps of one reward, in the order they run.

1. ``inputs``: what a trainer passes (strings, chat messages) becomes a ``JudgeRequest``, or a
   defined reward for bad input (``conversations`` turns chat messages into text).
2. ``prechecks``: completions that get a reward without the judge (empty, master keys, injections).
3. ``graded_text``: the part of the completion the judge grades (after the policy's reasoning).
4. ``cascade``: with ``strategy: cascade``, the rule reward decides where it has proof.
5. (the judge is asked: ``adapter.dispatch``, through ``adapter.cache``)
6. ``calibration``: the judge's score becomes the reward (a fitted curve, or confidence mapping).
7. ``fallback``: what answers when the judge did not (the rule reward, with its reason).
8. ``finish``: the ``RewardResult`` a trainer gets back (``adapter.result``), counted in the
   metrics and offered to the judgment log.
"""
