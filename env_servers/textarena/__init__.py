"""TextArena's single-player games, served as ``textarena:<ENV_ID>`` (see ``spec``)."""
