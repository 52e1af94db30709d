"""The server framework: base classes, sessions, the app, errors, registry and config.

Import submodules directly (``env_servers.core.models``, ``env_servers.core.app``); this
package imports nothing so that game models stay importable without FastAPI.
"""
