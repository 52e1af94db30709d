# The GRPO trainer image, with `arenagym train` as entry point.
#
#   docker build -f Dockerfiles/trainer.Dockerfile -t arenagym/trainer .        # GPU: CUDA torch, vLLM
#   docker build -f Dockerfiles/trainer.Dockerfile -t arenagym/trainer:cpu \
#       --build-arg EXTRAS=train --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cpu .
#   docker run --rm arenagym/trainer:cpu     # the tiny offline loop, with its own game servers
#
# Build arguments:
#   EXTRAS       package extras: train,vllm (default) for GPUs, train for a CPU image.
#   TORCH_INDEX  when set, TORCH_SPEC is installed from this index first, e.g. PyTorch's CPU
#                index (a ~200 MB torch instead of the multi-GB CUDA build). Empty (default):
#                torch comes from PyPI with everything else: the CUDA build on x86_64, at the
#                version vLLM pins when vllm is in EXTRAS.
#   TORCH_SPEC   the torch requirement installed from TORCH_INDEX, e.g. torch==2.13.0.
#   PACKAGES     game packages of your own to install too, e.g. ./games/arenagym-hilo.
# Configs live in /app/configs. Checkpoints go to the /outputs volume: /app/outputs links
# there, so a config's `output_dir: outputs/<run>` lands in /outputs/<run>. Downloads go to
# the /cache volume (HF_HOME=/cache/huggingface, the tiny model in /cache/arenagym).
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title=arenagym-trainer

ARG EXTRAS=train,vllm
ARG TORCH_INDEX=
ARG TORCH_SPEC=torch
ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# vLLM's Triton kernels compile a small C helper at run time: they need a C compiler.
RUN case ",${EXTRAS}," in *,vllm,*) \
        apt-get update \
        && apt-get install -y --no-install-recommends gcc libc6-dev \
        && rm -rf /var/lib/apt/lists/* ;; \
    esac

# A current pip: the base images carry older ones, with slower resolvers.
RUN python -m pip install --no-cache-dir --upgrade pip

RUN if [ -n "${TORCH_INDEX}" ]; then \
        python -m pip install --no-cache-dir --index-url "${TORCH_INDEX}" "${TORCH_SPEC}"; \
    fi

# Dependencies before sources, read from pyproject.toml: editing the code does not
# reinstall torch; this layer is rebuilt only when pyproject.toml or the build args change.
# vLLM's requirements come first: it pins torch exactly, and pip, meeting that pin first,
# does not backtrack through dozens of vLLM releases.
COPY pyproject.toml /tmp/pyproject.toml
RUN python -c "import sys, tomllib; p = tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']; \
extras = sorted(filter(None, sys.argv[1].split(',')), key=lambda e: e != 'vllm'); \
print('\n'.join([r for e in extras for r in p['optional-dependencies'][e]] + p['dependencies']))" \
        "${EXTRAS}" > /tmp/requirements.txt \
 && python -m pip install --no-cache-dir -r /tmp/requirements.txt \
 && rm /tmp/pyproject.toml /tmp/requirements.txt

COPY pyproject.toml README.md /tmp/src/
COPY env_servers /tmp/src/env_servers
COPY clients /tmp/src/clients
COPY trainer /tmp/src/trainer
# A game package of your own, as `arenagym new NAME --dir games` writes it, is installed from
# the build context as in the server image: `--build-arg PACKAGES=./games/arenagym-NAME`.
COPY games /tmp/src/games
ARG PACKAGES=""
WORKDIR /tmp/src
RUN python -m pip install --no-cache-dir --no-deps /tmp/src \
 && if [ -n "${PACKAGES}" ]; then python -m pip install --no-cache-dir ${PACKAGES}; fi \
 && rm -rf /tmp/src \
 && useradd --create-home --uid 1000 arena \
 && mkdir -p /app /outputs /cache/huggingface /cache/arenagym \
 && chown -R arena:arena /outputs /cache \
 && ln -s /outputs /app/outputs
WORKDIR /app
COPY configs configs

USER arena
ENV HF_HOME=/cache/huggingface \
    ARENAGYM_CACHE=/cache/arenagym
VOLUME ["/outputs", "/cache"]
ENTRYPOINT ["arenagym", "train"]
CMD ["--config", "configs/tiny-offline.yaml"]
