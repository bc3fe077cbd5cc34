// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The keys of AWS Signature Version 4, for Amazon Managed Service for Prometheus (and
// any store behind SigV4): the static credentials of an IAM identity that the tenant
// gives in its Secret. Unlike Prometheus's sigv4 section, there is no fallback to the
// SDK's default credential chain, a profile or a role to assume: those would sign with
// the manager's own AWS identity, which on a shared hub would let any tenant query
// what the manager may read.
const (
	// KeySigV4Region is the AWS region of the workspace, e.g. us-east-1.
	KeySigV4Region = "sigv4Region"
	// KeySigV4AccessKey is the access key ID of the IAM identity that signs.
	KeySigV4AccessKey = "sigv4AccessKey"
	// KeySigV4SecretKey is its secret access key.
	KeySigV4SecretKey = "sigv4SecretKey"
	// KeySigV4SessionToken is the session token of temporary credentials; optional.
	KeySigV4SessionToken = "sigv4SessionToken"
)

// sigv4Service is the signing name of Amazon Managed Service for Prometheus, as in
// Prometheus's own sigv4 round tripper.
const sigv4Service = "aps"

// sigv4Region is what an AWS region name looks like (us-east-1, us-gov-west-1,
// cn-north-1, eu-central-2).
var sigv4Region = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// sigv4Creds are the keys of SigV4 signing.
type sigv4Creds struct {
	region, accessKey, secretKey, sessionToken string
}

// readSigV4 reads the SigV4 keys: the region and both keys, or none of them.
func readSigV4(trimmed func(string) string, creds *credentials) error {
	s := sigv4Creds{region: trimmed(KeySigV4Region), accessKey: trimmed(KeySigV4AccessKey),
		secretKey: trimmed(KeySigV4SecretKey), sessionToken: trimmed(KeySigV4SessionToken)}
	if s.region == "" && s.accessKey == "" && s.secretKey == "" {
		if s.sessionToken != "" {
			return keyError(KeySigV4SessionToken, "set without sigv4Region, sigv4AccessKey and sigv4SecretKey; set those too, or delete it")
		}
		return nil
	}
	for _, k := range []struct{ key, value string }{{KeySigV4Region, s.region}, {KeySigV4AccessKey, s.accessKey}, {KeySigV4SecretKey, s.secretKey}} {
		if k.value == "" {
			return keyError(k.key, "missing or empty; SigV4 needs sigv4Region, sigv4AccessKey and sigv4SecretKey (static credentials: the manager never signs with its own AWS identity)")
		}
	}
	for _, k := range []struct{ key, value string }{{KeySigV4AccessKey, s.accessKey}, {KeySigV4SecretKey, s.secretKey}, {KeySigV4SessionToken, s.sessionToken}} {
		if hasControlChar(k.value) {
			return keyError(k.key, "contains a control character such as a line break; remove it")
		}
	}
	if !sigv4Region.MatchString(s.region) {
		return keyError(KeySigV4Region, "%q is not an AWS region name such as us-east-1", s.region)
	}
	creds.sigv4 = &s
	return nil
}

// sigv4RoundTripper signs each request with SigV4, after every other header is set
// (a signature covers them), as the last step before the transport.
type sigv4RoundTripper struct {
	next   http.RoundTripper
	cfg    Config
	signer *v4.Signer
}

func newSigV4RoundTripper(cfg Config, next http.RoundTripper) *sigv4RoundTripper {
	// The signer logs nothing unless asked to (v4.SignerOptions.LogSigning).
	return &sigv4RoundTripper{next: next, cfg: cfg, signer: v4.NewSigner()}
}

// RoundTrip sends a signed copy of req, leaving req untouched as http.RoundTripper
// requires. The body, the manager's own query, is read to hash it.
func (rt *sigv4RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s := rt.cfg.creds().sigv4
	req = req.Clone(req.Context())
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request to sign it: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: s.accessKey, SecretAccessKey: s.secretKey, SessionToken: s.sessionToken, Source: "prometheusSecret"}
	if err := rt.signer.SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), sigv4Service, s.region, time.Now()); err != nil {
		// The signer's errors name the request, never the credentials.
		return nil, fmt.Errorf("sign the request with SigV4: %w", err)
	}
	return rt.next.RoundTrip(req)
}
