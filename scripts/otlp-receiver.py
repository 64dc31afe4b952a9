#!/usr/bin/env python3
"""An OTLP trace receiver for the tests: takes spans over OTLP/HTTP (protobuf, POST /v1/traces)
and OTLP/gRPC (TraceService/Export) on loopback ports, decodes them with the OpenTelemetry
project's own protobuf definitions (opentelemetry-proto from PyPI), and appends one JSON object
per span to a file:

  {"transport": "http"|"grpc", "service": ..., "trace_id": hex, "span_id": hex,
   "parent_span_id": hex, "name": ..., "kind": "SERVER"|..., "status": "ERROR"|...,
   "start_ns": int, "end_ns": int, "attributes": {...}}

Usage: otlp-receiver.py --out FILE [--http-port N] [--grpc-port N]
Prints "ready http=PORT grpc=PORT" once both listen (0 picks free ports).
"""
import argparse
import gzip
import json
import sys
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

LOCK = threading.Lock()


def any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def record(request, transport, out):
    lines = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                lines.append(json.dumps({
                    "transport": transport,
                    "service": resource.get("service.name"),
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": trace_pb2.Span.SpanKind.Name(span.kind).replace("SPAN_KIND_", ""),
                    "status": trace_pb2.Status.StatusCode.Name(span.status.code).replace("STATUS_CODE_", ""),
                    "start_ns": span.start_time_unix_nano,
                    "end_ns": span.end_time_unix_nano,
                    "attributes": {kv.key: any_value(kv.value) for kv in span.attributes},
                }))
    with LOCK, open(out, "a") as handle:
        for line in lines:
            handle.write(line + "\n")


class HTTPHandler(BaseHTTPRequestHandler):
    out = ""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
            self.send_response(404 if self.path != "/v1/traces" else 415)
            self.end_headers()
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        record(request, "http", self.out)
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, out):
        self.out = out

    def Export(self, request, context):
        record(request, "grpc", self.out)
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--http-port", type=int, default=0)
    parser.add_argument("--grpc-port", type=int, default=0)
    arguments = parser.parse_args()
    open(arguments.out, "a").close()
    HTTPHandler.out = arguments.out
    http = ThreadingHTTPServer(("127.0.0.1", arguments.http_port), HTTPHandler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(arguments.out), server)
    grpc_port = server.add_insecure_port(f"127.0.0.1:{arguments.grpc_port}")
    server.start()
    print(f"ready http={http.server_address[1]} grpc={grpc_port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(main())
