"""Voice-to-voice latency: our pipeline and Pipecat's on identical work.

    python -m bench.latency [--runs 20]      (from the repository root)

See bench/README.md.
"""
