"""Getting verdicts from the judge servers, within each reward's deadline.

``dispatcher``: one request's way to the judge (single-flight, circuit breaker, deadline);
``batching``: micro-batches of requests, with a bound on calls in flight; ``breaker``: the
circuit breaker; ``replicas``: one judge on several servers (routing, failover, outliers);
``loop_thread``: the event loop the sync API drives.
"""
