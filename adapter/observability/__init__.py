"""What the judge did, for people and dashboards.

``metrics``: the counters and latencies of ``get_metrics()``; ``reward_distribution``: rewards per
source and answer type; ``prometheus_series`` and ``metrics_endpoint``: the same as Prometheus
series, in process (``metrics_port``); ``judgment_log`` and ``judgment_writer``: the sampled JSONL
audit log; ``tracing``: OpenTelemetry spans; ``canary``: known master keys sent to the live judge;
``fallback_watch``: a warning while too many recent rewards fell back.
"""
