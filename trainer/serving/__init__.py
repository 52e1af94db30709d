"""Serving a model: ``arenagym serve-model`` (chat completions, episodes) and ``arenagym ui``."""
