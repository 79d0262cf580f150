# codegen-chat as a container image: `codegen-chat serve` by default, any other command as arguments.
#
#   deploy/build-image.sh               # from python:3.11-slim (needs a registry)
#   deploy/build-image.sh --offline     # from the local base `codegen-chat sandbox build --offline` made
#   docker build -t codegen-chat .      # the same as the first, with pip reaching PyPI inside the build
#
# The base is a build argument: any Debian-like image with python3 (3.11+) and pip. Wheels found in
# deploy/wheels (build-image.sh puts them there) are installed without asking an index. EXTRAS names the
# package's extras to include ("kubernetes" for tests in Pods, "postgres" for replicas; comma-separated).
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
ARG EXTRAS=""
COPY . /src
RUN set -eu; \
    extras="${EXTRAS:+[$EXTRAS]}"; \
    if ls /src/deploy/wheels/*.whl >/dev/null 2>&1; then \
        from="--no-index --find-links /src/deploy/wheels codegen-chat$extras"; \
    else \
        from="/src$extras"; \
    fi; \
    # --target: a self-contained folder to copy into the runtime stage, outside the base's own packages
    python3 -m pip install --no-cache-dir --disable-pip-version-check --target /opt/codegen-chat $from; \
    # The config inside the image: the repo's, with the database on the data volume and the health
    # endpoints reachable from outside the container (the container's network is the boundary).
    sed -e 's|^path = "~/.local/share/codegen-chat/codegen.sqlite3"|path = "/data/codegen.sqlite3"|' \
        -e 's|^health_host = "127.0.0.1"|health_host = "0.0.0.0"|' \
        /src/config.toml > /opt/config.toml; \
    grep -q '^path = "/data/codegen.sqlite3"' /opt/config.toml; \
    grep -q '^health_host = "0.0.0.0"' /opt/config.toml

FROM ${BASE} AS runtime
# openssh-client: for a Docker engine reached over ssh:// (DOCKER_HOST or [sandbox] docker_host).
RUN set -eu; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-client; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    useradd --system --uid 10001 --user-group --home-dir /data --create-home --shell /usr/sbin/nologin codegen
COPY --from=build /opt/config.toml /etc/codegen-chat/config.toml
COPY --from=build /opt/codegen-chat /opt/codegen-chat
ENV PYTHONPATH=/opt/codegen-chat \
    PATH=/opt/codegen-chat/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CODEGEN_CONFIG=/etc/codegen-chat/config.toml \
    HOME=/data
USER codegen
WORKDIR /data
VOLUME /data
# 8080: /healthz and /readyz when no Slack HTTP server or web chat carries them; 3000: Slack's HTTP mode; 8000: the web chat.
EXPOSE 8080 3000
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["codegen-chat", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["codegen-chat"]
CMD ["serve"]
