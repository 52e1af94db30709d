"""``arenagym new NAME``: write a complete, installable game package to start a game from.

``generate`` validates the name and renders the templates in ``template/`` (package data:
``__package__`` in a path becomes the game's Python package, ``.tmpl`` is dropped, and
``${placeholders}`` are filled by :class:`string.Template`); ``cli`` is the command.
"""
