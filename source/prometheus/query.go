package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks the HTTP API that Prometheus and the stores compatible
// with it (VictoriaMetrics, Mimir, Thanos) answer: range queries and the
// series list. It sends a bearer token when it has one.
type Client struct {
	// Base is scheme://host[:port][/prefix] of the API (/api/v1 below it).
	Base  *url.URL
	HTTP  *http.Client
	Token string
}

// maxAnswer bounds one answer's size: a week of 1 s steps for a few
// hundred series fits; more is a selection to narrow.
const maxAnswer = 512 << 20

// rangeSeries is one series of a range query's matrix.
type rangeSeries struct {
	Metric     map[string]string `json:"metric"`
	Values     []floatPoint      `json:"values"`
	Histograms []histPoint       `json:"histograms"`
}

// floatPoint is [unix seconds, "value"].
type floatPoint struct {
	At    time.Time
	Value float64
}

// histPoint is [unix seconds, {count, sum, buckets}]: a native histogram
// sample as the API renders it (Prometheus 2.40 and later).
type histPoint struct {
	At   time.Time
	Hist nativeJSON
}

// nativeJSON is a native histogram in the query API's JSON: each bucket is
// [boundary rule, lower, upper, count] with numbers as strings; counts are
// per bucket, not cumulative.
type nativeJSON struct {
	Count   string       `json:"count"`
	Sum     string       `json:"sum"`
	Buckets []bucketJSON `json:"buckets"`
}

// bucketJSON is one bucket: its boundary rule (a number: which edges are
// inclusive) and its lower edge, upper edge and count (strings).
type bucketJSON struct {
	Lower, Upper, Count string
}

func (b *bucketJSON) UnmarshalJSON(raw []byte) error {
	var parts [4]json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("bucket: %w", err)
	}
	for i, dst := range []*string{&b.Lower, &b.Upper, &b.Count} {
		if err := json.Unmarshal(parts[i+1], dst); err != nil {
			return fmt.Errorf("bucket %s: %w", raw, err)
		}
	}
	return nil
}

func (p *floatPoint) UnmarshalJSON(b []byte) error {
	at, v, err := pointParts(b)
	if err != nil {
		return err
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return fmt.Errorf("sample value: %w", err)
	}
	p.At = at
	p.Value, err = strconv.ParseFloat(s, 64)
	return err
}

func (p *histPoint) UnmarshalJSON(b []byte) error {
	at, v, err := pointParts(b)
	if err != nil {
		return err
	}
	p.At = at
	if err := json.Unmarshal(v, &p.Hist); err != nil {
		return fmt.Errorf("histogram sample: %w", err)
	}
	return nil
}

// pointParts splits [time, value] and reads the time (seconds, with
// milliseconds as decimals).
func pointParts(b []byte) (time.Time, json.RawMessage, error) {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return time.Time{}, nil, fmt.Errorf("sample: %w", err)
	}
	var sec float64
	if err := json.Unmarshal(pair[0], &sec); err != nil || math.IsNaN(sec) || math.IsInf(sec, 0) {
		return time.Time{}, nil, fmt.Errorf("sample time %s: not a number", pair[0])
	}
	return time.UnixMilli(int64(math.Round(sec * 1000))).UTC(), pair[1], nil
}

// apiAnswer is the envelope of every answer.
type apiAnswer struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

// QueryRange evaluates expr at from, from+step, ... to.
func (c *Client) QueryRange(ctx context.Context, expr string, from, to time.Time, step time.Duration) ([]rangeSeries, error) {
	params := url.Values{"query": {expr}, "start": {apiTime(from)}, "end": {apiTime(to)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	var data struct {
		ResultType string        `json:"resultType"`
		Result     []rangeSeries `json:"result"`
	}
	if err := c.get(ctx, "/api/v1/query_range", params, &data); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("query %s: the store answered a %q, want a matrix", expr, data.ResultType)
	}
	return data.Result, nil
}

// Series lists the label sets of the series that match selector and have
// samples between from and to.
func (c *Client) Series(ctx context.Context, selector string, from, to time.Time) ([]map[string]string, error) {
	params := url.Values{"match[]": {selector}, "start": {apiTime(from)}, "end": {apiTime(to)}}
	var data []map[string]string
	if err := c.get(ctx, "/api/v1/series", params, &data); err != nil {
		return nil, fmt.Errorf("series %s: %w", selector, err)
	}
	return data, nil
}

func apiTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// get sends a GET (as a POST form when the query is long, as Prometheus'
// own UI does) and decodes the answer's data.
func (c *Client) get(ctx context.Context, path string, params url.Values, data any) error {
	u := *c.Base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	body := params.Encode()
	method := http.MethodGet
	if len(body) > 4<<10 {
		method = http.MethodPost
	} else {
		u.RawQuery = body
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return err
	}
	if method == http.MethodPost {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL would repeat what the caller says
		}
		return fmt.Errorf("cannot reach the store: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxAnswer {
		return fmt.Errorf("the answer exceeds %d MiB: narrow the selection or the window, or raise the step", maxAnswer>>20)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%s: the store refused the credentials: check --token-file (bearer_token_file)", resp.Status)
	}
	return decodeAnswer(resp.Status, b, data)
}

// decodeAnswer reads the API's envelope and its data.
func decodeAnswer(status string, b []byte, data any) error {
	var a apiAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("%s: not the Prometheus API's answer: %.200q", status, b)
	}
	if a.Status != "success" {
		return fmt.Errorf("%s: %s: %s", status, a.ErrorType, a.Error)
	}
	if err := json.Unmarshal(a.Data, data); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	return nil
}
