# The slim image behind `uses: <owner>/schema-contract-gate@v1` (action.yml):
# the gate, git and Python, no Java and no Spark. The smoke test has its own,
# larger image (smoke.Dockerfile, `uses: <owner>/schema-contract-gate/smoke@v1`);
# both run the same entrypoint.
#
# Everything is pinned: the base image by digest, every Python package by
# hash (locks/, refreshed by scripts/lock.sh). Debian's packages are the
# distribution's, at the security updates of the day the image is built.
#
# Written for the classic builder as well as BuildKit (no RUN --mount, no
# heredocs): GitHub's runner and Debian's docker.io may use either. Few
# instructions after the big layers: under the vfs storage driver (the test
# suite's daemon) every instruction copies the whole file system so far.
#
# BASE_IMAGE: the tests build against a local stand-in of the same Debian
# release where Docker Hub is out of reach (mmdebstrap + docker import);
# PIP_INDEX_URL: a mirror of PyPI (the hashes still decide what is installed).
ARG BASE_IMAGE=debian:trixie-slim@sha256:d7e12182ce18b85b93007c1dedf31f2d29e01ccf3182cc4017c709b6259bc132

# --- build: wheels from the lock, checked against their hashes ----------------
# hadolint ignore=DL3006
FROM ${BASE_IMAGE} AS build
ARG PIP_INDEX_URL=https://pypi.org/simple
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
COPY locks/build.txt locks/slim.txt pyproject.toml README.md LICENSE /src/
COPY gate /src/gate
# /opt/build holds pip and the build backend (from the hashed build lock);
# /opt/venv gets only the locked wheels and the gate's own wheel, no pip.
# Bytecode is compiled here, once: a container's file system is new on every
# run, so without it every start compiles the gate and sqlglot again.
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install --require-hashes --no-deps -r /src/build.txt \
    && /opt/build/bin/pip wheel --require-hashes --no-deps -w /wheels -r /src/slim.txt \
    && /opt/build/bin/pip wheel --no-deps --no-build-isolation --no-index -w /wheels /src \
    && python3 -m venv --without-pip /opt/venv \
    && /opt/build/bin/pip --python /opt/venv/bin/python install --no-deps --no-index /wheels/*.whl \
    && /opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib \
    && /opt/venv/bin/python -c "import gate.action" \
    && SCHEMA_GATE_CACHE=/opt/schema-gate-cache /opt/venv/bin/python -P -c "from gate.formats.validate import warm; warm()"

# --- the image -------------------------------------------------------------------
# hadolint ignore=DL3006
FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="schema-contract-gate" \
      org.opencontainers.image.description="CI gate for breaking data-contract changes" \
      org.opencontainers.image.source="https://github.com/your-org/schema-contract-gate" \
      org.opencontainers.image.licenses="Apache-2.0"
# PYTHONSAFEPATH: never import from the working directory. The workspace holds
# the pull request's files, so a `gate/` or `yaml.py` committed there must not
# shadow installed modules. No USER (GitHub starts the container as root to
# read the checkout) and no WORKDIR (GitHub sets it to GITHUB_WORKSPACE).
# SCHEMA_GATE_CACHE: the contract schemas' validators, compiled at build time.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONSAFEPATH=1 \
    SCHEMA_GATE_CACHE=/opt/schema-gate-cache
# -P is PYTHONSAFEPATH again, in case a workflow overrides the environment.
ENTRYPOINT ["python", "-P", "-m", "gate.action"]
# git: the gate reads contracts through git, and fetches over https (hence
# ca-certificates, which the GitHub API request needs too). Debian
# byte-compiles the standard library on install; compileall makes sure.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m compileall -q -j 0 "$(python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/schema-gate-cache /opt/schema-gate-cache
