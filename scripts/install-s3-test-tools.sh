#!/usr/bin/env bash
# The tests' reference peers, from PyPI, in a virtual environment: moto's standalone S3
# server (the tests start it on a free loopback port, with authentication on), boto3, whose
# botocore signer the SigV4 tests compare Alcedo's signer with, thumbor 7.8, which the
# thumbor-dialect tests start on a free loopback port and compare answers with,
# kubernetes-validate, whose bundled API schemas check contrib/kubernetes offline,
# opentelemetry-proto with grpcio, the OTLP receiver the tracing tests export to, and the
# Prometheus Python client, whose text-format parser reads the server's /metrics in the tests
# (scripts/prometheus-text-families.py), and imgproxy's Python URL builder (PyPI `imgproxy`),
# whose signed URLs the client-library tests send, beside thumbor's own libthumbor. Called by
# install-deps.sh; the tests find the environment at Tests/.venv-s3 (git-ignored) or at $ALCEDO_S3_VENV.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${ALCEDO_S3_VENV:-$here/Tests/.venv-s3}"
python="$venv/bin/python"
modules='import moto.server, boto3, botocore, flask_cors, thumbor, kubernetes_validate, grpc, opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc, prometheus_client, imgproxy, libthumbor'
if "$python" -c "$modules" 2>/dev/null \
    && "$venv/bin/thumbor" --version 2>/dev/null | grep -Eq '(^|v)7\.8\.'; then exit 0; fi
echo "install-s3-test-tools: creating $venv with moto[server], boto3, thumbor 7.8, kubernetes-validate, opentelemetry-proto, prometheus-client and imgproxy"
[ -x "$python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'moto[server]>=5,<6' 'boto3>=1.34' 'thumbor>=7.8,<7.9' \
    'kubernetes-validate>=1.37,<2' 'opentelemetry-proto>=1.20' 'grpcio>=1.60' 'prometheus-client>=0.20' 'imgproxy==1.0.0'
"$python" -c "$modules"
