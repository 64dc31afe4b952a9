#!/usr/bin/env python3
# Reads Prometheus' text exposition format on standard input with the Prometheus Python
# client's own parser (prometheus_client.parser.text_string_to_metric_families) and prints
# the families as JSON: [{"name", "type", "documentation", "samples": [{"name", "labels", "value"}]}].
# A text the parser refuses exits 1 with its message. The tests run it to check /metrics.
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    families = [
        {
            "name": family.name,
            "type": family.type,
            "documentation": family.documentation,
            "samples": [
                {"name": sample.name, "labels": dict(sample.labels),
                 "value": None if sample.value != sample.value else sample.value}
                for sample in family.samples
            ],
        }
        for family in text_string_to_metric_families(sys.stdin.read())
    ]
except Exception as error:  # the parser raises ValueError and others on bad input
    print(f"prometheus text not parsed: {error}", file=sys.stderr)
    sys.exit(1)
json.dump(families, sys.stdout)
