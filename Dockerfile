# syntax=docker/dockerfile:1
# Ludothèque: the API (default command) and the worker (`worker`) in one image.
# It embeds no Redis: REDIS_URL is required. It keeps no data of its own either:
# the archive of finished matches is the PostgreSQL database of
# LUDOTHEQUE_DATABASE_URL, whose schema `migrate` brings up to date (unset:
# nothing is archived). Install and start steps live in
# scripts/container.sh, which CI runs outside Docker (tests/deploy).

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engines ./engines
COPY service ./service
COPY scripts/container.sh ./scripts/container.sh
RUN sh scripts/container.sh install /opt/ludotheque /src

FROM python:3.11-slim AS runtime
# HOME: the user has none and the root filesystem may be read-only; what
# tools keep there (gunicorn's control socket) goes to the writable /tmp.
ENV HOME=/tmp \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LUDOTHEQUE_PREFIX=/opt/ludotheque \
    LUDOTHEQUE_BIND=0.0.0.0:8000 \
    LUDOTHEQUE_METRICS_BIND=0.0.0.0:9100 \
    PATH=/opt/ludotheque/bin:$PATH
# A fixed numeric id, so that Kubernetes' runAsNonRoot can check it.
RUN groupadd --system --gid 10001 ludotheque \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin ludotheque
COPY --from=build /opt/ludotheque /opt/ludotheque
WORKDIR /opt/ludotheque
USER 10001:10001
# 8000: the API; 9100: GET /metrics, for the scraper only (never publish it)
EXPOSE 8000 9100
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/opt/ludotheque/bin/container.sh", "healthcheck"]
ENTRYPOINT ["/opt/ludotheque/bin/container.sh"]
CMD ["start"]
