// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hostmatch"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// Allowlist is where the manager may connect for a policy's Prometheus: the hub
// admin's bound on the url of the Prometheus Secrets, which tenants write. Its entries
// are:
//
//   - a URL prefix, such as https://prom.example.com/ or
//     http://thanos.monitoring.svc:9090/prometheus: the scheme, host and port must be
//     the url's (the port defaults to the scheme's), and the path a prefix of the
//     url's path that ends at a "/" (/prometheus allows /prometheus/api, not
//     /prometheus2);
//   - a host name, such as thanos-querier.openshift-monitoring.svc: any scheme and port;
//   - a wildcard host, such as *.monitoring.svc: any name one or more labels under it;
//   - a CIDR, such as 10.96.0.0/12 or fd00::/8, or a single IP address.
//
// Host names are matched without regard to case. A url whose host is an IP address is
// checked against the CIDRs when its client is built. A url whose host is a name that
// no host or URL prefix entry allows is allowed only as far as the CIDRs allow: its
// client connects only to addresses in them, checked at each connection (so a name
// that resolves elsewhere later, DNS rebinding, is refused too). With CIDR entries,
// clients connect directly, never through a proxy of the environment (HTTPS_PROXY,
// HTTP_PROXY), whose address is not Prometheus's.
//
// A nil or empty Allowlist allows every url.
type Allowlist struct {
	entries  []string
	prefixes []urlPrefix
	list     hostmatch.List // the host, wildcard, CIDR and IP address entries
}

// urlPrefix is an entry of the Allowlist that is a URL.
type urlPrefix struct {
	scheme, host, port, path string
}

// ParseAllowlist reads the entries of an Allowlist (see Allowlist). An error names
// the first entry that is not one.
func ParseAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{}
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if err := a.add(e); err != nil {
			return nil, fmt.Errorf("allowlist entry %q: %w", raw, err)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// add reads one entry.
func (a *Allowlist) add(e string) error {
	if e == "" {
		return errors.New("empty; give a URL prefix, a host name, a wildcard host (*.example.svc), a CIDR or an IP address")
	}
	if strings.Contains(e, "://") {
		p, err := parsePrefix(e)
		if err != nil {
			return err
		}
		a.prefixes = append(a.prefixes, p)
		return nil
	}
	if taken, err := a.list.Add(e); taken || err != nil {
		return err
	}
	return errors.New("neither a URL (with a scheme, such as https://), a CIDR, an IP address nor a host name; to allow one port, give a URL prefix such as https://prometheus.example:9090/")
}

// parsePrefix reads an entry that is a URL.
func parsePrefix(e string) (urlPrefix, error) {
	u, err := url.Parse(e)
	if err != nil {
		return urlPrefix{}, errors.New("not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return urlPrefix{}, errors.New("the scheme must be http or https")
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return urlPrefix{}, errors.New("a URL prefix has only a scheme, a host, a port and a path")
	}
	host, err := urlHost(u)
	if err != nil {
		return urlPrefix{}, err
	}
	return urlPrefix{scheme: u.Scheme, host: host, port: urlPort(u), path: strings.TrimSuffix(u.Path, "/")}, nil
}

// urlHost is the host of u in a form to compare: a name in lower case without a
// trailing dot, or an IP address as netip writes it.
func urlHost(u *url.URL) (string, error) {
	h := u.Hostname()
	if h == "" {
		return "", errors.New("the URL has no host")
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String(), nil
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), nil
}

// urlPort is the port of u, the scheme's when u has none.
func urlPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// String lists the entries, for logs and messages.
func (a *Allowlist) String() string {
	if a.empty() {
		return "any url"
	}
	return strings.Join(a.entries, ", ")
}

func (a *Allowlist) empty() bool { return a == nil || len(a.entries) == 0 }

func (a *Allowlist) hasCIDRs() bool { return a != nil && a.list.HasCIDRs() }

// check decides whether the client of rawURL may be built. It returns a
// *NotAllowedError when it may not, and the Control function of the client's dialer
// when the url is allowed only through the CIDRs (nil otherwise).
func (a *Allowlist) check(rawURL string) (func(network, address string, c syscall.RawConn) error, error) {
	if a.empty() {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, a.refused(rawURL, false)
	}
	host, err := urlHost(u)
	if err != nil {
		return nil, a.refused(rawURL, false)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if a.list.MatchAddr(ip) || a.allowsHost(u, host) {
			return nil, nil
		}
		return nil, a.refused(rawURL, false)
	}
	if a.allowsHost(u, host) {
		return nil, nil
	}
	if !a.list.HasCIDRs() {
		return nil, a.refused(rawURL, false)
	}
	control := func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !a.list.MatchAddr(ap.Addr()) {
			return a.refused(rawURL, true)
		}
		return nil
	}
	return control, nil
}

// allowsHost says whether a URL prefix, a host or a wildcard entry allows u, whose
// host is host.
func (a *Allowlist) allowsHost(u *url.URL, host string) bool {
	for _, p := range a.prefixes {
		if p.scheme == u.Scheme && p.host == host && p.port == urlPort(u) &&
			(p.path == "" || u.Path == p.path || strings.HasPrefix(u.Path, p.path+"/")) {
			return true
		}
	}
	return a.list.MatchName(host)
}

// refused is the *NotAllowedError of rawURL.
func (a *Allowlist) refused(rawURL string, dialed bool) *NotAllowedError {
	return &NotAllowedError{URL: redactURL(rawURL), Dialed: dialed, Allowed: a.entries}
}

// redactURL is rawURL without its user information, query and fragment.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(not a valid URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// maxListedEntries bounds how many entries of the allowlist a message lists.
const maxListedEntries = 10

// NotAllowedError is a url that the manager's Allowlist does not allow: NewClient
// returns it, and a query returns it (inside the dial's error)
// when the host's address is refused at connection time. Run reports it with
// ReasonURLNotAllowed; ConfigErrorReason tells it from other errors of NewClient.
type NotAllowedError struct {
	// URL is the refused url, without its user information and query.
	URL string
	// Dialed is true when the url's host name was allowed only through the CIDRs and
	// an address it resolved to is not in them.
	Dialed bool
	// Allowed are the entries of the allowlist.
	Allowed []string
}

// Error says what is refused, what is allowed and what to do. It never holds the
// address the host resolved to.
func (e *NotAllowedError) Error() string {
	what := "is not"
	if e.Dialed {
		what = "resolves to an address that is not"
	}
	return fmt.Sprintf("url %s %s in the manager's Prometheus allowlist (allowed: %s); ask the hub admin, or use an allowed Prometheus",
		e.URL, what, shortlist.Join(e.Allowed, maxListedEntries))
}

// ConfigErrorReason is the reason of the PrometheusReachable condition for an error
// of NewClient, or of ConfigFromSecret: ReasonURLNotAllowed for a
// *NotAllowedError, ReasonSecretInvalid for anything else (a mistake in the Secret).
func ConfigErrorReason(err error) string {
	var notAllowed *NotAllowedError
	if errors.As(err, &notAllowed) {
		return v1alpha1.ReasonURLNotAllowed
	}
	return v1alpha1.ReasonSecretInvalid
}
