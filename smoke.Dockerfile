# The smoke-test image behind `uses: <owner>/schema-contract-gate/smoke@v1`
# (smoke/action.yml, `image: ../smoke.Dockerfile`, so that the repository root
# is the build context). It is the slim image (Dockerfile) plus a headless
# JRE, PySpark and pyarrow, for `smoke-test: true`; the entrypoint is the same.
# See Dockerfile for the reasoning behind each step; only the differences are
# commented here.
ARG BASE_IMAGE=debian:trixie-slim@sha256:d7e12182ce18b85b93007c1dedf31f2d29e01ccf3182cc4017c709b6259bc132

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
COPY locks/build.txt locks/smoke.txt pyproject.toml README.md LICENSE /src/
COPY gate /src/gate
# PySpark is published as an sdist only: `pip wheel` builds it with the
# setuptools of the hashed build lock, after checking the sdist's hash.
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install --require-hashes --no-deps -r /src/build.txt \
    && /opt/build/bin/pip wheel --require-hashes --no-deps --no-build-isolation --use-pep517 -w /wheels -r /src/smoke.txt \
    && /opt/build/bin/pip wheel --no-deps --no-build-isolation --no-index -w /wheels /src \
    && python3 -m venv --without-pip /opt/venv \
    && /opt/build/bin/pip --python /opt/venv/bin/python install --no-deps --no-index /wheels/*.whl \
    && /opt/venv/bin/python -m compileall -q -j 0 /opt/venv/lib \
    && /opt/venv/bin/python -c "import gate.action, pyspark, pyarrow" \
    && SCHEMA_GATE_CACHE=/opt/schema-gate-cache /opt/venv/bin/python -P -c "from gate.formats.validate import warm; warm()"

# hadolint ignore=DL3006
FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="schema-contract-gate-smoke" \
      org.opencontainers.image.description="CI gate for breaking data-contract changes, with the PySpark smoke test" \
      org.opencontainers.image.source="https://github.com/your-org/schema-contract-gate" \
      org.opencontainers.image.licenses="Apache-2.0"
# SPARK_LOCAL_IP: Spark fails when the container's hostname does not resolve.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONSAFEPATH=1 \
    SCHEMA_GATE_CACHE=/opt/schema-gate-cache \
    SPARK_LOCAL_IP=127.0.0.1
ENTRYPOINT ["python", "-P", "-m", "gate.action"]
# The JRE for the local Spark session (PySpark 4 runs on Java 17 or 21); the
# man1 folder is missing in slim images and the JRE's postinst needs it.
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends python3 git ca-certificates openjdk-21-jre-headless \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m compileall -q -j 0 "$(python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/schema-gate-cache /opt/schema-gate-cache
