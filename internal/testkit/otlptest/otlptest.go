// Package otlptest decodes OTLP/HTTP metrics requests with the official
// OpenTelemetry proto types, for the tests' loopback receivers: they
// stand in for an OpenTelemetry Collector, which no Debian or Go package
// here provides as a runnable server.
package otlptest

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// Decode reads one export request as latscope sends it: POST /v1/metrics,
// application/x-protobuf, gzip-compressed.
func Decode(req *http.Request) (*colmetricspb.ExportMetricsServiceRequest, error) {
	if req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		return nil, fmt.Errorf("unexpected request %s %s", req.URL.Path, req.Header.Get("Content-Type"))
	}
	if req.Header.Get("Content-Encoding") != "gzip" {
		return nil, fmt.Errorf("request not gzip-compressed")
	}
	zr, err := gzip.NewReader(req.Body)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	msg := &colmetricspb.ExportMetricsServiceRequest{}
	if err := proto.Unmarshal(body, msg); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return msg, nil
}

// Accept answers an export request as a Collector does.
func Accept(w http.ResponseWriter) {
	out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}
