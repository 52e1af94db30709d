"""Game servers speaking the OpenEnv protocol: the framework (``core``) and one package per
game."""
