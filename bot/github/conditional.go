package github

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// conditional makes GETs conditional: a response with an ETag is kept, and
// the next GET of the same URL sends If-None-Match. GitHub answers 304 without
// counting it against the rate limit, and the kept body is returned as 200.
type conditional struct {
	next  http.RoundTripper
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	etag   string
	body   []byte
	header http.Header
}

// maxCached bounds the kept responses; past it the cache starts over.
const maxCached = 2048

func (t *conditional) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" {
		return t.next.RoundTrip(req)
	}
	key := req.URL.String()
	t.mu.Lock()
	c, ok := t.cache[key]
	t.mu.Unlock()
	if ok {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", c.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && ok:
		resp.Body.Close()
		h := c.header.Clone()
		for k, v := range resp.Header { // fresh rate-limit headers
			h[k] = v
		}
		return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: h, Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: resp.Request}, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		if len(t.cache) >= maxCached {
			t.cache = map[string]cached{}
		}
		t.cache[key] = cached{etag: resp.Header.Get("ETag"), body: body, header: resp.Header.Clone()}
		t.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return resp, nil
}
