"""Trainer integrations, one module per framework, each imported on its own.

``adapter.integrations.trl`` (TRL reward functions), ``adapter.integrations.verl`` (verl;
``verl_turns.py`` carries verl's response mask to it),
``adapter.integrations.openrlhf`` (OpenRLHF remote reward model over HTTP;
``openrlhf_reward_func.py`` is its in-process alternative). Nothing is imported
here, so installing one framework never requires another.
"""

__all__: list[str] = []
