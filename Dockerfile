# Parley: build the wheels in one stage, run them slim and unprivileged in the next.
FROM python:3.11-slim AS build
WORKDIR /src
# Everything pyproject.toml packs into the wheel: the packages, README.md (its readme), the shipped
# configuration (→ bot/defaults) and the migrations (→ bot/migrations, which `parley db upgrade` runs).
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY bot ./bot
COPY config ./config
COPY migrations ./migrations
# Parley's wheel and one of every dependency: the runtime stage installs from these alone.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 parley
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index /wheels/*.whl && rm -rf /wheels
USER parley
WORKDIR /home/parley
ENV PYTHONUNBUFFERED=1 PORT=3000
EXPOSE 3000
# The shipped configuration is inside the package; mount your own and set PARLEY_CONFIG to change it.
# Migrate once before starting (or after an upgrade): docker run --rm … parley-image db upgrade
# (docker-compose.yml does this in its one-off `migrate` service). `serve` refuses an out-of-date schema.
# The check asks /healthz on $PORT (set PORT, not --port, to move it), bypassing any HTTP proxy; it fails on
# a 503 (database unreachable). Socket Mode (SLACK_APP_TOKEN) serves GET /healthz on $PORT too: the same check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import os, urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=4)"
ENTRYPOINT ["parley"]
CMD ["serve"]
