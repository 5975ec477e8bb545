# The smoke-test image behind `uses: <owner>/schema-contract-gate/smoke@v1`
# (smoke/action.yml, `image: ../smoke.Dockerfile`, so that the repository root
# is the build context): the slim image plus a headless JRE, PySpark and
# pyarrow, for `smoke-test: true`; the entrypoint is the same.
#
# Up to the "smoke" marker below this file is the Dockerfile's instructions,
# verbatim (tests/e2e/test_release.py checks): GitHub builds this file on its
# own, and a daemon that has built the slim image (the tests, a release) finds
# every one of those steps in its cache, so the smoke image is built from the
# slim image's layers, not from scratch. The comments there are the Dockerfile's.
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

# ===== smoke: the slim image above, plus a headless JRE, PySpark and pyarrow =====
# Two instructions per stage, no metadata ones (see the top of the Dockerfile).
# PySpark is published as an sdist only: `pip wheel` builds it with the
# setuptools of the hashed build lock, after checking the sdist's hash. The
# slim image's packages are in /opt/venv already, at the same pins (the locks
# agree: tests/e2e/test_release.py), so only Spark's are added.
# The wheel is only a step on the way into /opt/venv, so it is stored, not
# deflated (`--compression=stored`, setuptools' bdist_wheel): the same files
# are installed, and the build skips compressing Spark's 450 MB of already
# compressed jars (38 -> 18 CPU s measured, and no inflating them again).
# hadolint ignore=DL3006
FROM build AS smoke-build
RUN /build/bin/pip wheel --require-hashes --no-deps --no-build-isolation --use-pep517 --config-settings=--build-option=--compression=stored -w /smoke-wheels -r /src/smoke.txt \
    && /build/bin/pip --python /opt/venv/bin/python install --no-deps --no-index /smoke-wheels/*.whl \
    && rm -rf /opt/venv/lib/python3*/site-packages/*/tests \
    && /opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib \
    && /opt/venv/bin/python -c "import gate.action, pyspark, pyarrow"

# The JRE for the local Spark session (PySpark 4 runs on Java 17 or 21); the
# man1 folder is missing in slim images and the JRE's postinst needs it.
# hadolint ignore=DL3006
FROM slim
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-21-jre-headless \
    && rm -rf /var/lib/apt/lists/*
COPY --from=smoke-build /opt /opt
