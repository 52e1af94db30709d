"""``python -m env_servers`` is the ``arenagym`` command."""

from env_servers.cli import main

main(prog_name="arenagym")
