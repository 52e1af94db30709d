"""Wordle: find the secret 5-letter word in 6 guesses, with TextArena ``Wordle-v0`` text.

Import the submodules directly: ``env_servers.wordle.models`` (wire models, cheap, no
FastAPI), ``env_servers.wordle.game`` (pure rules) and ``env_servers.wordle.environment``
(``WordleEnvironment``). This package imports nothing itself, so loading the models never
pulls in the server.
"""
