"""Servers for tests, benchmarks and soaks; never for production judging.

``fake_server`` is a loopback fake of vLLM's OpenAI-compatible API with fault injection (its
"judgment" is a string match); ``fake_backend`` is the same judgment as an in-process
``JudgeBackend`` (no HTTP); ``asgi_server`` runs an ASGI app under uvicorn in a thread on
a loopback port (needs the ``api`` extra); ``ports`` finds a free loopback port. Import the
modules, not this package.
"""
