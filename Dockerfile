# The image behind `uses: <owner>/schema-contract-gate@v1` (action.yml: runs.using: docker).
# GitHub builds it on the runner and starts it as root with the checkout
# mounted at GITHUB_WORKSPACE as the working directory; that is why there is no
# USER (root is required to read the workspace) and no WORKDIR (GitHub sets it).
FROM python:3.12-slim-bookworm

# git: the gate reads contracts through git. A headless JRE: the optional smoke
# test runs PySpark in this container. Debian's package versions move with
# security updates, so they are not pinned.
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends git openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*

# PYTHONSAFEPATH: never import from the working directory. The workspace holds
# the pull request's files, so a `gate/` or `pandas.py` committed there must
# not shadow installed modules in this process, or in Spark's Python workers.
# SPARK_LOCAL_IP: Spark fails when the container's hostname does not resolve.
# SCHEMA_GATE_CACHE: the contract schemas' validators, compiled at build time.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONSAFEPATH=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    SPARK_LOCAL_IP=127.0.0.1 \
    SCHEMA_GATE_CACHE=/opt/schema-gate-cache

COPY pyproject.toml README.md /opt/schema-contract-gate/
COPY gate /opt/schema-contract-gate/gate
RUN pip install --no-cache-dir "/opt/schema-contract-gate[spark]" \
    && rm -rf /opt/schema-contract-gate \
    && python -P -c "import gate.action, pyspark" \
    && python -P -c "from gate.formats.validate import warm; warm()"

LABEL org.opencontainers.image.title="schema-contract-gate" \
      org.opencontainers.image.description="CI gate for breaking data-contract changes" \
      org.opencontainers.image.licenses="Apache-2.0"

# -P is PYTHONSAFEPATH again, in case a workflow overrides the environment.
ENTRYPOINT ["python", "-P", "-m", "gate.action"]
