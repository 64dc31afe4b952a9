#!/usr/bin/env python3
"""Validates contrib/kubernetes offline against the Kubernetes API schemas, and against what
the container image and alcedo serve expect.

Every YAML document under contrib/kubernetes (the kustomization's resources and examples/) is
checked with kubernetes-validate (from PyPI; its schemas are in the package, no cluster and no
network) in strict mode, so an unknown or misspelt field fails as the API server would reject
it, for each Kubernetes version given (default: the oldest and newest the project supports).
Then the manifests are checked against the image contrib/container/Containerfile builds: the
user id, the port, the cache folder, the health path, a memory limit for the budget, a
read-only root file system and non-root user.

Usage: check-kubernetes.py [--versions 1.30,1.37] [FILE...]   (exit 0 when all pass)
"""
import argparse
import glob
import os
import re
import sys

import kubernetes_validate
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFESTS = os.path.join(ROOT, "contrib", "kubernetes")
CONTAINERFILE = os.path.join(ROOT, "contrib", "container", "Containerfile")


def documents(path):
    with open(path) as handle:
        for index, document in enumerate(yaml.safe_load_all(handle)):
            if document is not None:
                yield index, document


def containerfile_facts():
    text = open(CONTAINERFILE).read()
    uid = re.search(r"useradd[^\n]*--uid (\d+)", text)
    env = dict(re.findall(r"(ALCEDO_[A-Z_]+)=(\S+)", text))
    health = re.search(r"curl -fsS http://127\.0\.0\.1:\d+(/\S+)", text)
    return {
        "uid": int(uid.group(1)) if uid else None,
        "port": int(env.get("ALCEDO_PORT", "0")),
        "cache": env.get("ALCEDO_CACHE_DIR"),
        "health": health.group(1) if health else None,
    }


def check_alcedo_deployment(deployment, facts, problems, where):
    spec = deployment["spec"]["template"]["spec"]
    pod_security = spec.get("securityContext", {})
    if not pod_security.get("runAsNonRoot"):
        problems.append(f"{where}: the pod must set runAsNonRoot")
    if facts["uid"] is not None and pod_security.get("runAsUser") != facts["uid"]:
        problems.append(f"{where}: runAsUser {pod_security.get('runAsUser')} is not the image's user {facts['uid']}")
    containers = [c for c in spec["containers"] if c["name"] == "alcedo"]
    if len(containers) != 1:
        problems.append(f"{where}: no container named alcedo")
        return
    container = containers[0]
    security = container.get("securityContext", {})
    if not security.get("readOnlyRootFilesystem"):
        problems.append(f"{where}: the root file system must be read-only")
    if security.get("allowPrivilegeEscalation", True):
        problems.append(f"{where}: allowPrivilegeEscalation must be false")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    if ports.get("http") != facts["port"]:
        problems.append(f"{where}: container port {ports.get('http')} is not the image's ALCEDO_PORT {facts['port']}")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        path = container.get(probe, {}).get("httpGet", {}).get("path")
        if path != facts["health"]:
            problems.append(f"{where}: {probe} asks {path}, the health path is {facts['health']}")
    memory = container.get("resources", {}).get("limits", {}).get("memory")
    if not memory:
        problems.append(f"{where}: a memory limit is the memory budget; none is set")
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    if facts["cache"] not in mounts:
        problems.append(f"{where}: the cache folder {facts['cache']} is not a writable volume (the root is read-only)")
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    if env.get("ALCEDO_CACHE_DIR") not in (None, facts["cache"]):
        problems.append(f"{where}: ALCEDO_CACHE_DIR {env['ALCEDO_CACHE_DIR']} is not the mounted {facts['cache']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", default="1.30.0,1.37.0")
    parser.add_argument("--no-image-checks", action="store_true", help="only the schema checks")
    parser.add_argument("files", nargs="*")
    arguments = parser.parse_args()
    versions = arguments.versions.split(",")
    files = arguments.files or sorted(glob.glob(os.path.join(MANIFESTS, "**", "*.yaml"), recursive=True))
    facts = containerfile_facts()
    problems = []
    checked = 0
    kinds = set()
    for path in files:
        where_file = os.path.relpath(path, ROOT)
        try:
            loaded = list(documents(path))
        except yaml.YAMLError as error:
            problems.append(f"{where_file}: not YAML: {error}")
            continue
        for index, document in loaded:
            where = f"{where_file}#{index} {document.get('kind')}/{document.get('metadata', {}).get('name')}"
            if document.get("kind") == "Kustomization":
                for resource in document.get("resources", []):
                    if not os.path.exists(os.path.join(os.path.dirname(path), resource)):
                        problems.append(f"{where}: resource {resource} does not exist")
                checked += 1
                continue
            for version in versions:
                try:
                    kubernetes_validate.validate(document, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    location = "/".join(str(part) for part in error.path)
                    problems.append(f"{where}: Kubernetes {version}: {location}: {error.message}")
                except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
                    problems.append(f"{where}: Kubernetes {version}: {error}")
            kinds.add(document.get("kind"))
            checked += 1
            if (not arguments.no_image_checks and document.get("kind") == "Deployment"
                    and document["metadata"]["name"] == "alcedo"):
                check_alcedo_deployment(document, facts, problems, where)
    for problem in problems:
        print(problem)
    print(f"check-kubernetes: {checked} documents ({', '.join(sorted(kinds))}) against Kubernetes "
          f"{', '.join(versions)}: {len(problems)} problems")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
