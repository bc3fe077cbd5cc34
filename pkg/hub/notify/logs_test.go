// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := &redactor{secretValues: func() [][]byte {
		return [][]byte{[]byte("xoxb-123-secret"), []byte("ab"), []byte("s3cr3t-token")}
	}}
	tests := map[string]struct {
		in, want string
	}{
		"a Secret's value": {
			in:   "slack answered invalid_auth for token xoxb-123-secret",
			want: "slack answered invalid_auth for token <redacted>",
		},
		"short values stay": {in: "about abc", want: "about abc"},
		"a webhook URL with a path": {
			in:   `Post "https://hooks.slack.com/services/T000/B000/XXXX": dial tcp: timeout`,
			want: `Post "https://hooks.slack.com/<redacted>": dial tcp: timeout`,
		},
		"user and password in a URL": {
			in:   "request to {POST https://user:pw@hooks.example.com ...}",
			want: "request to {POST https://hooks.example.com/<redacted> ...}",
		},
		"a bare host stays": {in: "to http://127.0.0.1:8080 failed", want: "to http://127.0.0.1:8080 failed"},
		"a Secret's value in a query": {
			in:   "GET https://example.com/hook?token=s3cr3t-token",
			want: "GET https://example.com/<redacted>",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := r.redact(tc.in); got != tc.want {
				t.Errorf("redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	var none *redactor
	if got := none.redact("see https://example.com/a/b"); strings.Contains(got, "/a/b") {
		t.Errorf("without a Secret, URLs are still cut: %q", got)
	}
}
