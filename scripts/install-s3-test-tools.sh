#!/usr/bin/env bash
# The object-storage tests' tools, from PyPI, in a virtual environment: moto's standalone S3
# server (the tests start it on a free loopback port, with authentication on) and boto3, whose
# botocore signer the SigV4 tests compare Alcedo's signer with. Called by install-deps.sh; the
# tests find the environment at Tests/.venv-s3 (git-ignored) or at $ALCEDO_S3_VENV.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${ALCEDO_S3_VENV:-$here/Tests/.venv-s3}"
python="$venv/bin/python"
if "$python" -c 'import moto.server, boto3, botocore, flask_cors' 2>/dev/null; then exit 0; fi
echo "install-s3-test-tools: creating $venv with moto[server] and boto3"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'moto[server]>=5,<6' 'boto3>=1.34'
"$python" -c 'import moto.server, boto3, botocore' 
