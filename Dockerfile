# The ctiwire image: the API, the Celery worker and beat all run from it (docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 CTIWIRE_DATA_DIR=/data CTIWIRE_MODEL_DIR=/opt/ctiwire/models
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config config
COPY telemetry telemetry
COPY store store
COPY ingest ingest
COPY exporters exporters
COPY webhooks webhooks
COPY server server
COPY taxii taxii
COPY web web
COPY workers workers
COPY application application
COPY cli cli
# The ATT&CK procedure classifier and the lead classifiers are trained once here, from the package data, so no
# process of the image trains them at run time (ingest/enrich/procedures.py, ingest/enrich/leads.py).
RUN pip install --no-cache-dir . && python -m ingest.enrich.procedures && python -m ingest.enrich.leads && useradd --system --home /data ctiwire && mkdir -p /data && chown ctiwire /data
USER ctiwire
EXPOSE 8000
CMD ["ctiwire", "serve", "--no-seed"]
