# Parley: build a wheel in one stage, run it slim and unprivileged in the next.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY bot ./bot
COPY config ./config
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 parley
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER parley
WORKDIR /home/parley
ENV PYTHONUNBUFFERED=1 PORT=3000
EXPOSE 3000
# The shipped configuration is inside the package; mount your own and set PARLEY_CONFIG to change it.
# Migrate once before starting (or after an upgrade): docker run --rm … parley-image db upgrade
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"3000\")}/healthz', timeout=4)"
ENTRYPOINT ["parley"]
CMD ["serve"]
