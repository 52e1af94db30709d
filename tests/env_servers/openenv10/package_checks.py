"""OpenEnv 0.10's checks of a package folder: ``openenv validate DIR --level static`` (its
command, run in this process) and the structure check ``openenv push DIR`` starts with.
``package_checks.py DIR``; prints JSON."""

import contextlib
import io
import json
import sys
from pathlib import Path

from openenv.cli.__main__ import app
from openenv.cli._cli_utils import validate_env_structure

folder = sys.argv[1]
output = io.StringIO()
with contextlib.redirect_stdout(output):
    try:
        app(["validate", folder, "--level", "static"], standalone_mode=False)
        code = 0
    except SystemExit as exit_:
        code = exit_.code or 0
    except Exception as error:  # click's Exit in standalone_mode=False
        code = getattr(error, "exit_code", 1)
try:
    validate_env_structure(Path(folder))
    structure = "ok"
except FileNotFoundError as error:
    structure = str(error)
print(
    json.dumps(
        {"validate_exit": code, "validate_output": output.getvalue(), "push_structure": structure}
    )
)
