// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	corev1 "k8s.io/api/core/v1"
)

// Keys of the Prometheus Secret that a policy's prometheusSecret names.
const (
	// KeyURL is the address of the Prometheus HTTP API, e.g. https://thanos-querier:9091.
	KeyURL = "url"
	// KeyToken is a bearer token sent in the Authorization header.
	KeyToken = "token"
	// KeyUsername is the user name of HTTP basic authentication; it needs KeyPassword.
	KeyUsername = "username"
	// KeyPassword is the password of HTTP basic authentication; it needs KeyUsername.
	KeyPassword = "password"
	// KeyCA holds the PEM certificates of the authorities that sign Prometheus's
	// serving certificate, used instead of the system's roots.
	KeyCA = "ca.crt"
	// KeyInsecureSkipVerify, "true" or "false", turns off the check of Prometheus's
	// serving certificate. Meant for tests only.
	KeyInsecureSkipVerify = "insecureSkipVerify"
	// KeyTenant is the tenant sent as the X-Scope-OrgID header to multi-tenant stores
	// such as Thanos, Cortex or Mimir.
	KeyTenant = "X-Scope-OrgID"
	// KeyClientCert holds the PEM client certificate (and its intermediates) that the
	// manager presents to a Prometheus, or a proxy in front of it, that requires one
	// (mutual TLS); it needs KeyClientKey. The names are those of a kubernetes.io/tls
	// Secret.
	KeyClientCert = "tls.crt"
	// KeyClientKey holds the PEM private key of KeyClientCert.
	KeyClientKey = "tls.key"
	// KeyOAuth2ClientID is the client ID of the OAuth 2.0 client credentials grant:
	// with KeyOAuth2ClientSecret and KeyOAuth2TokenURL, the manager fetches a token
	// from the token endpoint and sends it as a bearer token, as Prometheus's oauth2
	// section does.
	KeyOAuth2ClientID = "oauth2ClientID"
	// KeyOAuth2ClientSecret is the client secret of the client credentials grant.
	KeyOAuth2ClientSecret = "oauth2ClientSecret"
	// KeyOAuth2TokenURL is the token endpoint, an absolute https (or http) URL; the
	// allowlist applies to it as to the url.
	KeyOAuth2TokenURL = "oauth2TokenURL"
	// KeyOAuth2Scopes are the scopes asked for, separated by spaces or commas;
	// optional.
	KeyOAuth2Scopes = "oauth2Scopes"
	// KeyHeaderPrefix starts the keys of custom headers: "header.X-Api-Key" sends the
	// header X-Api-Key with the key's value on every query. The headers that
	// prometheus/common/config reserves (Authorization, Host, User-Agent, ...) and
	// X-Scope-OrgID (use its own key) are refused. Their values count as credentials.
	KeyHeaderPrefix = "header."
)

// DefaultQueryTimeout bounds one query when Config.Timeout is zero, so that a hung
// Prometheus cannot stall the evaluation of the other clusters.
const DefaultQueryTimeout = 10 * time.Second

// knownKeys are the keys ConfigFromSecret reads, sorted.
var knownKeys = []string{KeyTenant, KeyCA, KeyInsecureSkipVerify, KeyOAuth2ClientID, KeyOAuth2ClientSecret, KeyOAuth2Scopes, KeyOAuth2TokenURL, KeyPassword,
	KeySigV4AccessKey, KeySigV4Region, KeySigV4SecretKey, KeySigV4SessionToken, KeyClientCert, KeyClientKey, KeyToken, KeyURL, KeyUsername}

// Config says how to reach and authenticate to Prometheus. It is built from the
// policy's Secret by ConfigFromSecret, which checks every key, so that a mistake in
// the Secret is reported as such and not as a failing query.
//
// The credentials are kept unexported, behind a function, and String and GoString
// leave them out, so that printing a Config in a log or an error, with any verb and
// even inside another struct's unexported field, never shows the token, the
// password or the CA. A Config is therefore not comparable with ==.
type Config struct {
	// URL is the absolute http or https address of the Prometheus HTTP API, without
	// the /api/v1 suffix.
	URL string
	// Tenant is sent as the X-Scope-OrgID header when not empty.
	Tenant string
	// InsecureSkipVerify turns off the check of Prometheus's serving certificate.
	InsecureSkipVerify bool
	// Timeout bounds each query; DefaultQueryTimeout when zero. It is not read from
	// the Secret: the manager sets it.
	Timeout time.Duration
	// MaxAnswerBytes bounds what is read of one answer; DefaultMaxAnswerBytes when
	// zero. A larger answer fails the query with an *AnswerTooLargeError, unread past
	// the bound. Set by the manager, like MaxSeries and Allowlist.
	MaxAnswerBytes int64
	// MaxSeries bounds the series of one answer; DefaultMaxSeries when zero. It is
	// sent to Prometheus as the query's limit, and a vector or matrix of more series
	// fails the query with an *AnswerTooLargeError.
	MaxSeries int
	// Allowlist is where the client may connect; nil allows any URL. NewClient
	// refuses a URL it does not allow with a *NotAllowedError.
	Allowlist *Allowlist

	// secrets returns the credentials. It is a function because package fmt prints
	// the fields a pointer or a struct leads to, but never what a function returns.
	secrets func() *credentials
}

// creds returns the credentials, none when the Config was not built by
// ConfigFromSecret.
func (c Config) creds() *credentials {
	if c.secrets == nil {
		return &credentials{}
	}
	return c.secrets()
}

// credentials are the secret parts of a Config.
type credentials struct {
	token    string
	username string
	password string
	// caPEM holds the validated ca.crt, nil when the system roots are used.
	caPEM []byte
	// caCount is the number of certificates in caPEM, for String.
	caCount int
	// clientCert is the validated client certificate of tls.crt and tls.key, nil
	// when none is presented.
	clientCert *tls.Certificate
	// oauth2 is the client credentials grant, nil when not used.
	oauth2 *oauth2Creds
	// sigv4 are the SigV4 credentials, nil when not used.
	sigv4 *sigv4Creds
	// headers are the custom headers of the header.<Name> keys, by canonical name.
	headers map[string]string
}

// oauth2Creds are the keys of the OAuth 2.0 client credentials grant.
type oauth2Creds struct {
	clientID, clientSecret, tokenURL string
	scopes                           []string
}

// SecretKeyError is a mistake in one key of the Prometheus Secret. Its message says
// what is wrong and how to fix it, and never holds the value of a secret key.
type SecretKeyError struct {
	// Key is the Secret key at fault.
	Key string
	// Problem says what is wrong with the key and what to do about it.
	Problem string
}

// Error formats the mistake as `Secret key "<key>": <problem>`.
func (e *SecretKeyError) Error() string {
	return fmt.Sprintf("Secret key %q: %s", e.Key, e.Problem)
}

func keyError(key, format string, args ...any) error {
	return &SecretKeyError{Key: key, Problem: fmt.Sprintf(format, args...)}
}

// ConfigFromSecret reads and checks the Prometheus Secret. Every error it returns is
// a mistake in the Secret that the user must fix (report it with ReasonSecretInvalid
// and do not retry until the Secret changes); most are a *SecretKeyError. No error
// holds the token, the password or the CA.
//
// Values are taken from stringData first, then data. Surrounding white space, such
// as the newline a file often ends with, is trimmed from every value but the
// password, which is used exactly as given. An empty value counts as an absent key.
// Keys other than the known ones are ignored, except those that differ from a known
// key only in case, which are reported as misspelled.
func ConfigFromSecret(secret *corev1.Secret) (Config, error) {
	if secret == nil {
		return Config{}, fmt.Errorf("no Prometheus Secret given")
	}
	if err := checkKeySpelling(secret); err != nil {
		return Config{}, err
	}
	get := func(key string) string {
		if v, ok := secret.StringData[key]; ok {
			return v
		}
		return string(secret.Data[key])
	}
	trimmed := func(key string) string { return strings.TrimSpace(get(key)) }

	var cfg Config
	var creds credentials

	u, err := parseURL(trimmed(KeyURL))
	if err != nil {
		return Config{}, err
	}
	cfg.URL = u

	creds.token = trimmed(KeyToken)
	if hasControlChar(creds.token) || strings.ContainsAny(creds.token, " \t") {
		return Config{}, keyError(KeyToken, "the token contains white space or a control character; store the bare token, without a line break or a \"Bearer \" prefix")
	}

	creds.username = trimmed(KeyUsername)
	creds.password = get(KeyPassword)
	switch {
	case creds.username != "" && creds.password == "":
		return Config{}, keyError(KeyPassword, "username is set but password is empty or missing; set both for basic authentication, or neither")
	case creds.username == "" && creds.password != "":
		return Config{}, keyError(KeyUsername, "password is set but username is empty or missing; set both for basic authentication, or neither")
	case strings.Contains(creds.username, ":"):
		return Config{}, keyError(KeyUsername, "the username contains ':', which basic authentication cannot carry")
	case hasControlChar(creds.username):
		return Config{}, keyError(KeyUsername, "the username contains a control character such as a line break; remove it")
	}
	if creds.token != "" && creds.username != "" {
		return Config{}, keyError(KeyToken, "both token and username/password are set; use one way to authenticate: keep token for bearer authentication or username and password for basic authentication, and delete the other")
	}

	if ca := trimmed(KeyCA); ca != "" {
		n, err := checkCA([]byte(ca))
		if err != nil {
			return Config{}, err
		}
		creds.caPEM = []byte(ca)
		creds.caCount = n
	}

	if err := readClientCert(trimmed, &creds); err != nil {
		return Config{}, err
	}
	if err := readOAuth2(trimmed, &creds); err != nil {
		return Config{}, err
	}
	if creds.oauth2 != nil && (creds.token != "" || creds.username != "") {
		return Config{}, keyError(KeyOAuth2ClientID, "OAuth2 and token or username/password are set; use one way to authenticate and delete the other")
	}
	if err := readSigV4(trimmed, &creds); err != nil {
		return Config{}, err
	}
	if creds.sigv4 != nil && (creds.token != "" || creds.username != "" || creds.oauth2 != nil) {
		return Config{}, keyError(KeySigV4AccessKey, "SigV4 and token, username/password or OAuth2 are set; use one way to authenticate and delete the other")
	}
	headers, err := readHeaders(secret, get)
	if err != nil {
		return Config{}, err
	}
	creds.headers = headers

	switch v := trimmed(KeyInsecureSkipVerify); v {
	case "", "false":
	case "true":
		cfg.InsecureSkipVerify = true
	default:
		return Config{}, keyError(KeyInsecureSkipVerify, "must be \"true\" or \"false\", not %q", v)
	}

	cfg.Tenant = trimmed(KeyTenant)
	if hasControlChar(cfg.Tenant) {
		return Config{}, keyError(KeyTenant, "the tenant contains a control character such as a line break; remove it")
	}

	cfg.secrets = func() *credentials { return &creds }
	return cfg, nil
}

// checkKeySpelling reports a key that is a known key in the wrong case, such as
// "URL" or "x-scope-orgid": ignoring it would silently drop what the user meant.
func checkKeySpelling(secret *corev1.Secret) error {
	for _, k := range secretKeys(secret) {
		for _, known := range knownKeys {
			if k != known && strings.EqualFold(k, known) {
				return keyError(k, "unknown key; did you mean %q? Keys are case-sensitive", known)
			}
		}
	}
	return nil
}

// secretKeys are the keys of the secret's Data and StringData, sorted, each once.
func secretKeys(secret *corev1.Secret) []string {
	var keys []string
	for k := range secret.Data {
		keys = append(keys, k)
	}
	for k := range secret.StringData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// parseURL checks that raw is an absolute http or https URL and returns it
// normalised. Its errors quote at most the scheme, since a URL may carry secrets in
// its user information or query.
func parseURL(raw string) (string, error) {
	if raw == "" {
		return "", keyError(KeyURL, "missing or empty; set it to the address of the Prometheus HTTP API, for example https://thanos-querier.openshift-monitoring.svc:9091")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the whole URL: report only its cause.
		cause := err
		if uerr, ok := err.(*url.Error); ok {
			cause = uerr.Err
		}
		return "", keyError(KeyURL, "not a valid URL (%v); set it to an address such as https://prometheus.example:9090", cause)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return "", keyError(KeyURL, "not an absolute URL; start it with https:// or http://")
		}
		return "", keyError(KeyURL, "scheme %q is not supported; use https:// or http://", u.Scheme)
	}
	if u.Host == "" {
		return "", keyError(KeyURL, "has no host; set it to an address such as https://prometheus.example:9090")
	}
	if u.User != nil {
		return "", keyError(KeyURL, "holds user information (user:password@); remove it from the URL and set the username and password keys instead")
	}
	if u.Fragment != "" {
		return "", keyError(KeyURL, "has a fragment (#...); remove it")
	}
	return u.String(), nil
}

// checkCA checks that pemData holds only PEM CERTIFICATE blocks, at least one, each
// a valid X.509 certificate, and returns how many. Its errors never quote the data.
func checkCA(pemData []byte) (int, error) {
	rest := pemData
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n++
		if block.Type != "CERTIFICATE" {
			return 0, keyError(KeyCA, "PEM block %d is a %s, not a CERTIFICATE; ca.crt holds only the certificates of the authorities that sign Prometheus's certificate (never a key)", n, pemTypeName(block.Type))
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return 0, keyError(KeyCA, "PEM block %d is not a valid X.509 certificate; put the CA certificate in PEM form", n)
		}
	}
	if n == 0 {
		return 0, keyError(KeyCA, "holds no PEM certificate; put the CA certificate in PEM form, starting with -----BEGIN CERTIFICATE-----")
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return 0, keyError(KeyCA, "has text after PEM block %d that is not a PEM block; remove it or fix the block", n)
	}
	return n, nil
}

// pemTypeName returns a PEM block type fit to quote in an error: the known types as
// they are, anything else (which could be a corrupted secret) as "unknown block".
func pemTypeName(t string) string {
	switch t {
	case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
		"PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST",
		"X509 CRL", "TRUSTED CERTIFICATE", "OPENSSH PRIVATE KEY":
		return t
	}
	return "block of an unknown type"
}

func hasControlChar(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// authKind names the way the Config authenticates, for String.
func (c Config) authKind() string {
	switch creds := c.creds(); {
	case creds.token != "":
		return "bearer token"
	case creds.username != "":
		return "basic"
	case creds.oauth2 != nil:
		return "oauth2 client credentials"
	case creds.sigv4 != nil:
		return "sigv4 (region " + creds.sigv4.region + ")"
	}
	return "none"
}

// String describes the Config without its credentials, so that it can be logged.
func (c Config) String() string {
	ca := "system roots"
	if n := c.creds().caCount; n > 0 {
		ca = fmt.Sprintf("%d certificate(s)", n)
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultQueryTimeout
	}
	creds := c.creds()
	names := slices.Sorted(maps.Keys(creds.headers))
	return fmt.Sprintf("{url: %s, auth: %s, ca.crt: %s, client certificate: %t, headers: %v, insecureSkipVerify: %t, X-Scope-OrgID: %q, timeout: %s}",
		c.URL, c.authKind(), ca, creds.clientCert != nil, names, c.InsecureSkipVerify, c.Tenant, timeout)
}

// GoString is String for %#v, so that no verb of package fmt prints the credentials.
func (c Config) GoString() string {
	return "promcheck.Config" + c.String()
}

// readClientCert reads tls.crt and tls.key: both or neither, a certificate and the
// key that matches it. Its errors never quote either.
func readClientCert(trimmed func(string) string, creds *credentials) error {
	certPEM, keyPEM := trimmed(KeyClientCert), trimmed(KeyClientKey)
	switch {
	case certPEM == "" && keyPEM == "":
		return nil
	case keyPEM == "":
		return keyError(KeyClientKey, "tls.crt is set but tls.key is empty or missing; a client certificate needs its private key")
	case certPEM == "":
		return keyError(KeyClientCert, "tls.key is set but tls.crt is empty or missing; set the client certificate beside its key")
	}
	if block, _ := pem.Decode([]byte(certPEM)); block == nil || block.Type != "CERTIFICATE" {
		return keyError(KeyClientCert, "does not start with a PEM CERTIFICATE block; put the client certificate in PEM form, starting with -----BEGIN CERTIFICATE-----")
	}
	if block, _ := pem.Decode([]byte(keyPEM)); block == nil || !strings.HasSuffix(block.Type, "PRIVATE KEY") {
		return keyError(KeyClientKey, "does not hold a PEM private key; put the client certificate's key in PEM form (unencrypted)")
	}
	cert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		// tls's errors name what is wrong, never the data.
		return keyError(KeyClientKey, "tls.crt and tls.key are not a usable pair (%v); set the certificate and the private key that belong to it", err)
	}
	creds.clientCert = &cert
	return nil
}

// readOAuth2 reads the keys of the client credentials grant: all three of the ID,
// the secret and the token URL, or none of the OAuth2 keys.
func readOAuth2(trimmed func(string) string, creds *credentials) error {
	o := oauth2Creds{
		clientID:     trimmed(KeyOAuth2ClientID),
		clientSecret: trimmed(KeyOAuth2ClientSecret),
		tokenURL:     trimmed(KeyOAuth2TokenURL),
	}
	scopes := trimmed(KeyOAuth2Scopes)
	if o.clientID == "" && o.clientSecret == "" && o.tokenURL == "" {
		if scopes != "" {
			return keyError(KeyOAuth2Scopes, "set without oauth2ClientID, oauth2ClientSecret and oauth2TokenURL; set those too, or delete it")
		}
		return nil
	}
	for _, k := range []struct{ key, value string }{{KeyOAuth2ClientID, o.clientID}, {KeyOAuth2ClientSecret, o.clientSecret}, {KeyOAuth2TokenURL, o.tokenURL}} {
		if k.value == "" {
			return keyError(k.key, "missing or empty; OAuth2 client credentials need oauth2ClientID, oauth2ClientSecret and oauth2TokenURL")
		}
		if hasControlChar(k.value) {
			return keyError(k.key, "contains a control character such as a line break; remove it")
		}
	}
	u, err := parseURL(o.tokenURL)
	if err != nil {
		var kerr *SecretKeyError
		if errors.As(err, &kerr) {
			return keyError(KeyOAuth2TokenURL, "%s", strings.Replace(kerr.Problem, "the Prometheus HTTP API", "the OAuth2 token endpoint", 1))
		}
		return err
	}
	o.tokenURL = u
	o.scopes = strings.FieldsFunc(scopes, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	creds.oauth2 = &o
	return nil
}

// readHeaders reads the header.<Name> keys. The names are checked as
// prometheus/common/config checks them, and against the headers the manager sets.
func readHeaders(secret *corev1.Secret, get func(string) string) (map[string]string, error) {
	headers := map[string]string{}
	for _, k := range secretKeys(secret) {
		if !strings.HasPrefix(strings.ToLower(k), KeyHeaderPrefix) {
			continue
		}
		if !strings.HasPrefix(k, KeyHeaderPrefix) {
			return nil, keyError(k, "unknown key; did you mean %q? Keys are case-sensitive", KeyHeaderPrefix+k[len(KeyHeaderPrefix):])
		}
		name := k[len(KeyHeaderPrefix):]
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return !isTokenChar(r) }) {
			return nil, keyError(k, "%q is not a valid HTTP header name", name)
		}
		canonical := http.CanonicalHeaderKey(name)
		if canonical == http.CanonicalHeaderKey(KeyTenant) {
			return nil, keyError(k, "set the tenant with the %q key instead", KeyTenant)
		}
		if err := (&promconfig.Headers{Headers: map[string]promconfig.Header{canonical: {}}}).Validate(); err != nil {
			return nil, keyError(k, "the header %s may not be set (it is the manager's or the connection's); use the token, username/password or OAuth2 keys for credentials", canonical)
		}
		if _, dup := headers[canonical]; dup {
			return nil, keyError(k, "the header %s is set by another key that differs only in case; keep one", canonical)
		}
		v := strings.TrimSpace(get(k))
		if v == "" {
			continue
		}
		if hasControlChar(v) {
			return nil, keyError(k, "the value contains a control character such as a line break; remove it")
		}
		headers[canonical] = v
	}
	return headers, nil
}

// isTokenChar says whether r may be in an HTTP header name (RFC 9110's tchar).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
