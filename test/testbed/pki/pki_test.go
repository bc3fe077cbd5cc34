// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package pki

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"testing"
)

func TestIssue(t *testing.T) {
	ca := NewTestCA(t, "test-ca")
	other := NewTestCA(t, "other-ca")
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	server := ca.IssueForTest(t, "server", "127.0.0.1", "localhost")
	client, err := ca.Issue("alice", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	stranger := other.IssueForTest(t, "server", "127.0.0.1")

	leaf := func(p *Pair) *x509.Certificate {
		t.Helper()
		pair, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return pair.Leaf
	}
	verify := func(c *x509.Certificate, host string, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}

	s := leaf(server)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if err := verify(s, host, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("server certificate for %s: %v", host, err)
		}
	}
	if verify(s, "", x509.ExtKeyUsageClientAuth) == nil {
		t.Error("a server's certificate verifies as a client's")
	}
	c := leaf(client)
	if err := verify(c, "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if c.Subject.CommonName != "alice" || !slices.Equal(c.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("client subject %v, want alice in system:masters", c.Subject)
	}
	if verify(leaf(stranger), "127.0.0.1", x509.ExtKeyUsageServerAuth) == nil {
		t.Error("another CA's certificate verifies")
	}
	if !ca.Cert.IsCA {
		t.Error("the CA's certificate is not a CA's")
	}
	if _, err := tls.X509KeyPair(ca.CertPEM, ca.KeyPEM); err != nil {
		t.Errorf("the CA's PEM: %v", err)
	}
}
