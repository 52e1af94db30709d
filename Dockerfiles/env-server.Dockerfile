# A game server image: one Dockerfile for every game, chosen at build time.
#
#   docker build -f Dockerfiles/env-server.Dockerfile --build-arg GAME=wordle -t arenagym/wordle .
#   docker run --rm -p 8001:8000 arenagym/wordle        # then: curl localhost:8001/health
#
# A game of a family (`--build-arg GAME=textarena:Mastermind-v0`) also gets arenagym's extra
# named after the family, when there is one (`.[textarena]`); a game from another package
# names it, e.g. `--build-arg PACKAGES=my-games` (anything pip installs). The build fails,
# saying why, when the game cannot be loaded.
#
# Only the server is installed (`pip install .`, no train extra: no torch). Settings come from
# ARENAGYM_* variables (ARENAGYM_PORT, ARENAGYM_MAX_SESSIONS, ARENAGYM_SESSION_TTL, …);
# ARENAGYM_GAME picks another registered game at run time, and arguments after the image
# name go to `arenagym serve`.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title=arenagym-env-server

ARG GAME
ARG PACKAGES=""
ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

COPY pyproject.toml README.md /tmp/src/
COPY env_servers /tmp/src/env_servers
COPY clients /tmp/src/clients
COPY trainer /tmp/src/trainer
# A game package of your own, as `arenagym new NAME --dir games` writes it, is installed from
# the build context: `--build-arg GAME=NAME --build-arg PACKAGES=./games/arenagym-NAME`
# (PACKAGES: anything pip installs; a relative path starts at the context's root).
COPY games /tmp/src/games
WORKDIR /tmp/src
RUN test -n "${GAME}" || { echo "build with --build-arg GAME=<game id>, e.g. wordle" >&2; exit 1; } \
 && case "${GAME}" in *:*) source="/tmp/src[${GAME%%:*}]" ;; *) source=/tmp/src ;; esac \
 && python -m pip install --no-cache-dir "${source}" ${PACKAGES} \
 && python -c "import sys; from env_servers.core.registry import load_environment as load; load(sys.argv[1])" "${GAME}" \
 && rm -rf /tmp/src \
 && useradd --create-home --uid 1000 arena

USER arena
WORKDIR /home/arena
ENV ARENAGYM_GAME=${GAME} \
    ARENAGYM_HOST=0.0.0.0 \
    ARENAGYM_PORT=8000
EXPOSE 8000
# Slim images have no curl: ask /health from Python, bypassing any proxy settings.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD python -c "import os, urllib.request as r; r.build_opener(r.ProxyHandler({})).open('http://127.0.0.1:%s/health' % os.environ.get('ARENAGYM_PORT', '8000'), timeout=4)" || exit 1
# exec: the server is PID 1 and gets SIGTERM itself, so `docker stop` drains it.
ENTRYPOINT ["/bin/sh", "-c", "exec arenagym serve \"$ARENAGYM_GAME\" \"$@\"", "arenagym-serve"]
