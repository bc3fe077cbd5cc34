// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package pki is the one certificate authority of the tests: the test bed's clusters
// and registry, and the tests of Prometheus over TLS and mTLS, make their CAs and
// certificates with it. It writes no file; the test bed writes what it needs.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// CA is a self-signed certificate authority made for one test or test bed.
type CA struct {
	// Cert and Key sign the certificates the CA issues.
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertPEM and KeyPEM are Cert and Key in PEM, as a user puts them in files or in a
	// Secret.
	CertPEM, KeyPEM []byte
}

// NewCA makes a CA of the common name name, with client-go's self-signed CA template.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	certPEM, keyPEM, err := encode(cert, key)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// Pair is a certificate the CA signed and its key, in PEM.
type Pair struct {
	CertPEM, KeyPEM []byte
}

// Issue signs a client's certificate for the user commonName in the groups orgs or,
// with hosts (IP addresses or DNS names), a server's for them. It is valid from an
// hour ago for a day.
func (ca *CA) Issue(commonName string, orgs []string, hosts ...string) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := encode(cert, key)
	if err != nil {
		return nil, err
	}
	return &Pair{CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// encode returns cert and key in PEM.
func encode(cert *x509.Certificate, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	if certPEM, err = certutil.EncodeCertificates(cert); err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	return certPEM, keyPEM, err
}

// NewTestCA is NewCA for a test, which it fails on an error.
func NewTestCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// IssueForTest is Issue, in no groups, for a test, which it fails on an error.
func (ca *CA) IssueForTest(t testing.TB, commonName string, hosts ...string) *Pair {
	t.Helper()
	pair, err := ca.Issue(commonName, nil, hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// MTLSServerConfigForTest is the TLS configuration of a test's server that requires
// client certificates: a server's certificate for hosts that ca signs, and a client's
// certificate that ca signs required of every client. It fails t on an error.
func (ca *CA) MTLSServerConfigForTest(t testing.TB, hosts ...string) *tls.Config {
	t.Helper()
	serving := ca.IssueForTest(t, "server", hosts...)
	cert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AddCert(ca.Cert)
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clients,
		MinVersion:   tls.VersionTLS12,
	}
}
