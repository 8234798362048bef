# The ctiwire image: the API, the Celery worker and beat all run from it (docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 CTIWIRE_DATA_DIR=/data
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config config
COPY telemetry telemetry
COPY store store
COPY ingest ingest
COPY exporters exporters
COPY server server
COPY taxii taxii
COPY web web
COPY workers workers
COPY application application
COPY cli cli
RUN pip install --no-cache-dir . && useradd --system --home /data ctiwire && mkdir -p /data && chown ctiwire /data
USER ctiwire
EXPOSE 8000
CMD ["ctiwire", "serve", "--no-seed"]
