// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSigV4SignsEveryQuery: with the SigV4 keys, each query carries an AWS Signature
// Version 4 of service aps in the Secret's region by its access key, signed after the
// tenant header, and neither the secret key nor the session token is sent.
func TestSigV4SignsEveryQuery(t *testing.T) {
	var auth, date, token, tenant string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, date, token, tenant = r.Header.Get("Authorization"), r.Header.Get("X-Amz-Date"), r.Header.Get("X-Amz-Security-Token"), r.Header.Get(KeyTenant)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()
	cfg, err := ConfigFromSecret(secretWith(KeyURL, srv.URL, KeySigV4Region, "eu-west-1", KeySigV4AccessKey, "AKIDEXAMPLE",
		KeySigV4SecretKey, testSigV4SecretKey, KeySigV4SessionToken, "session-token-value", KeyTenant, "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(context.Background(), "up", time.Now()); err != nil {
		t.Fatalf("query: %v", err)
	}
	want := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/[0-9]{8}/eu-west-1/aps/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`)
	if !want.MatchString(auth) {
		t.Errorf("Authorization: %q, want a SigV4 signature of aps in eu-west-1 by AKIDEXAMPLE", auth)
	}
	if date == "" || token != "session-token-value" || tenant != "team-a" {
		t.Errorf("X-Amz-Date %q, X-Amz-Security-Token %q, X-Scope-OrgID %q: want a date, the session token and the tenant", date, token, tenant)
	}
	if strings.Contains(auth, testSigV4SecretKey) {
		t.Errorf("the secret key was sent: %q", auth)
	}
}
