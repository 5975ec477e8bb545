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
# instructions, and none after the big layers: under the vfs storage driver
# (the test suite's daemon where the kernel mounts no overlay file system)
# every instruction, even ENV or LABEL, copies the whole file system so far
# (four metadata lines on this image took 81 s on a loaded 2-core machine).
# The OCI labels are set by the release workflow.
# smoke.Dockerfile repeats this file's instructions verbatim and adds Spark, so
# a daemon that built this image builds the smoke image from its cached layers.
#
# BASE_IMAGE: the tests build against a local stand-in of the same Debian
# release where Docker Hub is out of reach (mmdebstrap + docker import);
# PIP_INDEX_URL: a mirror of PyPI (the hashes still decide what is installed).
ARG BASE_IMAGE=debian:trixie-slim@sha256:d7e12182ce18b85b93007c1dedf31f2d29e01ccf3182cc4017c709b6259bc132

# --- build: wheels from the lock, checked against their hashes ----------------
# hadolint ignore=DL3006
FROM ${BASE_IMAGE} AS build
ARG PIP_INDEX_URL=https://pypi.org/simple
# PIP_INDEX_URL as ENV too: smoke.Dockerfile's stage FROM this one sees it
ENV PIP_INDEX_URL=${PIP_INDEX_URL} \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
# (smoke.txt is for smoke.Dockerfile, which shares this stage)
COPY locks/build.txt locks/slim.txt locks/smoke.txt pyproject.toml README.md LICENSE /src/
COPY gate /src/gate
# /build holds pip and the build backend (from the hashed build lock);
# /opt/venv gets only the locked wheels and the gate's own wheel, no pip.
# Bytecode is compiled here, once: a container's file system is new on every
# run, so without it every start compiles the gate and sqlglot again. The
# packages' own test suites are left out (nothing imports them at run time).
# Everything the image needs ends up under /opt: one COPY below.
RUN python3 -m venv /build \
    && /build/bin/pip install --require-hashes --no-deps -r /src/build.txt \
    && /build/bin/pip wheel --require-hashes --no-deps -w /wheels -r /src/slim.txt \
    && /build/bin/pip wheel --no-deps --no-build-isolation --no-index -w /wheels /src \
    && python3 -m venv --without-pip /opt/venv \
    && /build/bin/pip --python /opt/venv/bin/python install --no-deps --no-index /wheels/*.whl \
    && rm -rf /opt/venv/lib/python3*/site-packages/*/tests \
    && /opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib \
    && /opt/venv/bin/python -c "import gate.action" \
    && /opt/venv/bin/python -P -c "from gate._dataclass_code import warm; warm()" \
    && SCHEMA_GATE_CACHE=/opt/schema-gate-cache /opt/venv/bin/python -P -c "from gate.formats.validate import warm; warm()"

# --- the image -------------------------------------------------------------------
# hadolint ignore=DL3006
FROM ${BASE_IMAGE} AS slim
# PYTHONSAFEPATH: never import from the working directory. The workspace holds
# the pull request's files, so a `gate/` or `yaml.py` committed there must not
# shadow installed modules. No USER (GitHub starts the container as root to
# read the checkout) and no WORKDIR (GitHub sets it to GITHUB_WORKSPACE).
# SCHEMA_GATE_CACHE: the contract schemas' validators, compiled at build time.
# SPARK_LOCAL_IP: for the smoke image (Spark fails when the container's
# hostname does not resolve); set here so that image adds no ENV layer.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONSAFEPATH=1 \
    SCHEMA_GATE_CACHE=/opt/schema-gate-cache \
    SPARK_LOCAL_IP=127.0.0.1
# -P is PYTHONSAFEPATH again, in case a workflow overrides the environment.
ENTRYPOINT ["python", "-P", "-m", "gate.action"]
# git: the gate reads contracts through git, and fetches over https (hence
# ca-certificates, which the GitHub API request needs too). Debian's git
# depends on perl, whose modules (50 MB; debconf uses perl-base's) serve only git's scripts the gate
# never runs (send-email, svn, instaweb): the gate's git commands are all
# built in. Like the slim base image's docs and man pages, dpkg leaves those
# files out (path-exclude; the packages stay installed, so apt stays
# consistent; perl-base, which dpkg itself uses, is whole), and git's
# server and mail programs too (16 MB). Debian byte-compiles the standard
# library on install; compileall makes sure.
# hadolint ignore=DL3008
RUN printf 'path-exclude=%s\n' '/usr/share/perl/*' '/usr/lib/*/perl/*' \
        '/usr/lib/*/libperl.so*' '/usr/bin/scalar' '/usr/bin/git-shell' '/usr/lib/git-core/scalar' \
        '/usr/lib/git-core/git-shell' '/usr/lib/git-core/git-daemon' '/usr/lib/git-core/git-http-*' \
        '/usr/lib/git-core/git-imap-send' > /etc/dpkg/dpkg.cfg.d/schema-gate-slim \
    && apt-get update \
    && apt-get install -y --no-install-recommends python3 git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m compileall -q -j 0 "$(python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
COPY --from=build /opt /opt
