"""The file to pass to OpenRLHF's ``--reward.remote_url``: its ``reward_func`` is the judge.

Print its path with ``judge-vllm openrlhf-rm --print-reward-func-path``. OpenRLHF executes this
file anew for each executor it builds; the adapter lives in
``adapter.integrations.openrlhf_inprocess`` (docs there), one per process.
"""

from adapter.integrations.openrlhf_inprocess import reward_func

__all__ = ["reward_func"]
