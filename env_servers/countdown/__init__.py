"""Countdown: make the target number from the given numbers with + - * / and parentheses.

``models`` holds the wire models (cheap to import, no FastAPI), ``expression`` the answer
extraction and the safe verifier, ``game`` the puzzles and the attempt loop, ``environment``
the server-side ``Environment``. Nothing is imported here, so importing ``models`` stays cheap.
"""
