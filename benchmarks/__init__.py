"""Benchmarks: load generators and comparisons against the stock OpenEnv server.

Run ``python -m benchmarks.server_load --help``; results land in ``benchmarks/results/``.
"""
